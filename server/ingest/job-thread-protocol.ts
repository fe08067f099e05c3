import type { MessagePort } from "node:worker_threads";
import type { ThreadConnectorSpec } from "../connectors/thread-connector";
import type { ProgressRow } from "./job-counters";
import type { BatchPolicy } from "./batched-index-writer";
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

/** How the job thread writes to the index engine at the other end of its writer channel (ThreadableIndex.jobWrites). */
export interface JobWrites {
  /** How its documents are grouped into writes: GROUP_COMMIT for SQLite's writer thread, PARALLEL_BATCHES for PostgreSQL. */
  batching: BatchPolicy;
  /** Whether the job's end asks the engine to settle its writes (IngestIndex.settleWrites: PostgreSQL folds its GIN pending lists). */
  settleWrites: boolean;
}

/** The API's thread to the job thread. `run` names one job on it. */
export type ToJobThread =
  | {
      type: "start";
      run: number;
      task: JobThreadTask;
      /** Its own channel for the index's writes (ThreadableIndex.writerPort): to SQLite's writer thread, or to the API's thread for PostgreSQL. */
      writer: MessagePort;
      writes: JobWrites;
    }
  | { type: "cancel"; run: number }
  | ({ type: "answer" } & CallReply);

/** The job thread to the API's: a job's counters, a question on the index (asked of that job's index), and how the job ended (its last message). */
export type FromJobThread =
  | { type: "progress"; run: number; row: ProgressRow; /** Flushed there: written now, not at the next periodic write. */ flush: boolean }
  | { type: "ask"; run: number; id: number; method: "indexedState" | "moveAside"; args: string[] }
  | { type: "done"; run: number }
  | { type: "failed"; run: number; error: WireError };
