import { parentPort, workerData, type MessagePort } from "node:worker_threads";
import { SqliteFtsIndex } from "./sqlite";
import { startHeapTrace } from "../diagnostics/heap-trace";
import { answerCall, type CallReply } from "../threads/pending-calls";

/** The index's write side on its own thread: FTS5 tokenizing would otherwise stall the API. */

export interface WriterRequest {
  id: number;
  method: "upsertDocuments" | "stageChunks" | "commitStaged" | "discardStaged" | "removeUnfinished" | "removeDocuments" | "release" | "upgrade" | "close";
  args: unknown[];
}

/**
 * Another thread's own channel to the writer (an ingestion job's thread): requests on it are
 * answered on it. `checked`: its collection, when a search reader has just found its file sound (trustChecked).
 */
export interface WriterConnect {
  connect: MessagePort;
  checked: string[];
}

/** An error keeps its code: SQLite's or the OS's (SQLITE_FULL, ENOSPC) or SLUICE_INDEX_DAMAGED, so the caller can tell those apart. */
export type WriterReply = CallReply;

const index = new SqliteFtsIndex({ dir: (workerData as { dir: string }).dir });
startHeapTrace("index writer");

function answer(port: MessagePort | NonNullable<typeof parentPort>, request: WriterRequest): Promise<void> {
  const method = index[request.method] as (...args: unknown[]) => Promise<unknown>;
  return answerCall((reply) => port.postMessage(reply), request.id, () => method.apply(index, request.args));
}

parentPort!.on("message", (request: WriterRequest | WriterConnect) => {
  if ("connect" in request) {
    index.trustChecked(request.checked);
    const port = request.connect;
    port.on("message", (r: WriterRequest) => void answer(port, r));
    // A channel whose other thread ended must not keep this one alive.
    port.unref();
    return;
  }
  void answer(parentPort!, request);
});
