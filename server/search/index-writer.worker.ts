import { parentPort, workerData } from "node:worker_threads";
import { SqliteFtsIndex } from "./sqlite-fts-index";

/** The index's write side on its own thread: FTS5 tokenizing would otherwise stall the API. */

export interface WriterRequest {
  id: number;
  method: "upsertDocuments" | "stageChunks" | "commitStaged" | "discardStaged" | "removeUnfinished" | "removeDocuments" | "release" | "upgrade" | "close";
  args: unknown[];
}

/** code: SQLite's or the OS's (SQLITE_FULL, ENOSPC) or SLUICE_INDEX_DAMAGED, so the caller can tell those apart. */
export type WriterReply = { id: number; ok: true; result: unknown } | { id: number; ok: false; message: string; code?: string };

const index = new SqliteFtsIndex({ dir: (workerData as { dir: string }).dir });

parentPort!.on("message", async (request: WriterRequest) => {
  try {
    const method = index[request.method] as (...args: unknown[]) => Promise<unknown>;
    const result = await method.apply(index, request.args);
    parentPort!.postMessage({ id: request.id, ok: true, result } satisfies WriterReply);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    parentPort!.postMessage({ id: request.id, ok: false, message: (error as Error).message, code: typeof code === "string" ? code : undefined } satisfies WriterReply);
  }
});
