import { parentPort, workerData } from "node:worker_threads";
import { SqliteFtsIndex } from "./sqlite-fts-index";
import { startHeapTrace } from "../diagnostics/heap-trace";

/** One search reader thread: its own read-only connections to the collection files (index-reader-pool.ts). */

export interface ReaderRequest {
  id: number;
  method: "search" | "listDocuments" | "check" | "release" | "markDamaged";
  args: unknown[];
}

/** code: SQLite's, or SLUICE_INDEX_DAMAGED, so the caller can tell a damaged index apart. */
export type ReaderReply = { id: number; ok: true; result: unknown } | { id: number; ok: false; message: string; code?: string };

const index = new SqliteFtsIndex({ dir: (workerData as { dir: string }).dir, readOnly: true });
startHeapTrace("index reader");

parentPort!.on("message", async (request: ReaderRequest) => {
  try {
    const method = index[request.method] as (...args: unknown[]) => Promise<unknown>;
    const result = await method.apply(index, request.args);
    parentPort!.postMessage({ id: request.id, ok: true, result } satisfies ReaderReply);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    parentPort!.postMessage({ id: request.id, ok: false, message: (error as Error).message, code: typeof code === "string" ? code : undefined } satisfies ReaderReply);
  }
});
