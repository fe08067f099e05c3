import { parentPort, workerData, type MessagePort } from "node:worker_threads";
import { SqliteFtsIndex } from "./sqlite-fts-index";
import { startHeapTrace } from "../diagnostics/heap-trace";

/** The index's write side on its own thread: FTS5 tokenizing would otherwise stall the API. */

export interface WriterRequest {
  id: number;
  method: "upsertDocuments" | "stageChunks" | "commitStaged" | "discardStaged" | "removeUnfinished" | "removeDocuments" | "release" | "upgrade" | "close";
  args: unknown[];
}

/** Another thread's own channel to the writer (an ingestion job's thread): requests on it are answered on it. */
export interface WriterConnect {
  connect: MessagePort;
}

/** code: SQLite's or the OS's (SQLITE_FULL, ENOSPC) or SLUICE_INDEX_DAMAGED, so the caller can tell those apart. */
export type WriterReply = { id: number; ok: true; result: unknown } | { id: number; ok: false; message: string; code?: string };

const index = new SqliteFtsIndex({ dir: (workerData as { dir: string }).dir });
startHeapTrace("index writer");

async function answer(port: MessagePort | NonNullable<typeof parentPort>, request: WriterRequest): Promise<void> {
  try {
    const method = index[request.method] as (...args: unknown[]) => Promise<unknown>;
    const result = await method.apply(index, request.args);
    port.postMessage({ id: request.id, ok: true, result } satisfies WriterReply);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    port.postMessage({ id: request.id, ok: false, message: (error as Error).message, code: typeof code === "string" ? code : undefined } satisfies WriterReply);
  }
}

parentPort!.on("message", (request: WriterRequest | WriterConnect) => {
  if ("connect" in request) {
    const port = request.connect;
    port.on("message", (r: WriterRequest) => void answer(port, r));
    // A channel whose other thread ended must not keep this one alive.
    port.unref();
    return;
  }
  void answer(parentPort!, request);
});
