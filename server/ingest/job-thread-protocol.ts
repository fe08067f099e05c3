import type { MessagePort } from "node:worker_threads";
import type { ThreadConnectorSpec } from "../connectors/thread-connector";
import type { ProgressRow } from "./job-counters";
import type { CallReply } from "../threads/pending-calls";
import type { WireError } from "../threads/wire-error";

/** The job thread's workerData: what every job on it shares. */
export interface JobThreadData {
  /** DATA_DIR's free-space minimum (DiskGuard); null: no minimum. */
  disk: { dir: string; minFreeBytes: number } | null;
}

/** One job for the thread: everything from the database and the secret store, looked up already. */
export interface JobThreadTask {
  connector: ThreadConnectorSpec;
  sourceId: string;
  collectionId: string;
}

/** The API's thread to the job thread. `run` names one job on it. */
export type ToJobThread =
  | { type: "start"; run: number; task: JobThreadTask; /** Its own channel to the index writer thread (ThreadedSqliteIndex.writerPort). */ writer: MessagePort }
  | { type: "cancel"; run: number }
  | ({ type: "answer" } & CallReply);

/** The job thread to the API's: a job's counters, a question on the index, and how the job ended (its last message). */
export type FromJobThread =
  | { type: "progress"; run: number; row: ProgressRow; /** Flushed there: written now, not at the next periodic write. */ flush: boolean }
  | { type: "ask"; id: number; method: "indexedState" | "moveAside"; args: string[] }
  | { type: "done"; run: number }
  | { type: "failed"; run: number; error: WireError };
