import type { OcrSettings } from "../config";
import type { MessagePort } from "node:worker_threads";
import type { ThreadConnectorSpec } from "../connectors/thread-connector";
import type { ProgressRow } from "./job-counters";

/** The job thread's workerData: what every job on it shares. */
export interface JobThreadData {
  /** DATA_DIR's free-space minimum (DiskGuard); null: no minimum. */
  disk: { dir: string; minFreeBytes: number } | null;
  /** The parsers' OCR settings; null: the parser pool's defaults. */
  ocr: OcrSettings | null;
  /** How long a parser thread stays without a file before it stops (the parser pool's steadyIdleMs). */
  parsersIdleMs: number;
}

/** One job for the thread: everything from the database and the secret store, looked up already. */
export interface JobThreadTask {
  connector: ThreadConnectorSpec;
  sourceId: string;
  collectionId: string;
  /** The file server whose permissions the documents keep (sync-source.ts); null: a plain source. */
  permissionServer: string | null;
}

/** What the API's thread calls on the job thread (threads/rpc.ts). `run` names one job on it. */
export interface JobThreadCalls {
  /**
   * Runs one job; the reply is how it ended, after its last counters. `writer`: its own channel
   * to the index writer thread (ThreadedSqliteIndex.writerPort), in the transfer list.
   */
  run(run: number, task: JobThreadTask, writer: MessagePort): Promise<void>;
  /** A note: the job is cancelled (or the server stops); it ends as interrupted. */
  cancel(run: number): void;
}

/** What the job thread calls on the API's thread. */
export interface JobHostCalls {
  /** A note: a job's counters. `flush`: flushed there, so written now, not at the next periodic write. */
  progress(run: number, row: ProgressRow, flush: boolean): void;
  /** Sets a damaged index file aside once every thread (the API's, the search readers, the writer) has let go of it. */
  moveAside(collectionId: string): Promise<string | null>;
}
