import type { MessagePort } from "node:worker_threads";
import type { ThreadConnectorSpec } from "../connectors/thread-connector";
import type { ProgressRow } from "./job-counters";
import type { WireError } from "./thread-errors";

/** What an ingestion job's thread starts with (its workerData): everything from the database and the secret store, looked up already. */
export interface JobThreadStart {
  connector: ThreadConnectorSpec;
  sourceId: string;
  collectionId: string;
  /** DATA_DIR's free-space minimum (DiskGuard); null: no minimum. */
  disk: { dir: string; minFreeBytes: number } | null;
  /** Its own channel to the index writer thread (ThreadedSqliteIndex.writerPort). */
  writer: MessagePort;
}

/** The API's thread to the job's. */
export type ToJobThread =
  | { type: "cancel" }
  | { type: "answer"; id: number; ok: true; result: unknown }
  | { type: "answer"; id: number; ok: false; error: WireError };

/** The job's thread to the API's: its counters, a question on the index, and how it ended (the last message). */
export type FromJobThread =
  | { type: "progress"; row: ProgressRow }
  | { type: "ask"; id: number; method: "indexedState" | "moveAside"; args: string[] }
  | { type: "done" }
  | { type: "failed"; error: WireError };
