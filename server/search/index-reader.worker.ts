import { parentPort, workerData } from "node:worker_threads";
import { SqliteFtsIndex } from "./sqlite";
import { startHeapTrace } from "../diagnostics/heap-trace";
import { answerCall, type CallReply } from "../threads/pending-calls";

/** One search reader thread: its own read-only connections to the collection files (index-reader-pool.ts). */

export interface ReaderRequest {
  id: number;
  method: "search" | "listDocuments" | "check" | "release" | "markDamaged";
  args: unknown[];
}

/** An error keeps its code: SQLite's, or SLUICE_INDEX_DAMAGED, so the caller can tell a damaged index apart. */
export type ReaderReply = CallReply;

const index = new SqliteFtsIndex({ dir: (workerData as { dir: string }).dir, readOnly: true });
startHeapTrace("index reader");

parentPort!.on("message", (request: ReaderRequest) => {
  const method = index[request.method] as (...args: unknown[]) => Promise<unknown>;
  void answerCall((reply) => parentPort!.postMessage(reply), request.id, () => method.apply(index, request.args));
});
