import { Worker, type MessagePort } from "node:worker_threads";
import type { ThreadConnectorSpec } from "../connectors/thread-connector";
import { IndexDamagedError } from "../search/index-damage";
import type { IndexedState } from "../search/search-index";
import { WORKER_YOUNG_GENERATION_MB, workerScript } from "../worker-script";
import type { JobCounters } from "./job-counters";
import type { FromJobThread, JobThreadStart, ToJobThread } from "./job-thread-protocol";
import { fromWire, toWire } from "./thread-errors";

const WORKER = workerScript(__filename, "job-thread.worker");

/** What of the collection index the API's thread lends a job's thread: ThreadedSqliteIndex. */
export interface ThreadableIndex {
  writerPort(): MessagePort;
  noteDamaged(collectionId: string): void;
  indexedState(collectionId: string, sourceId: string): Promise<Map<string, IndexedState>>;
  moveAside(collectionId: string): Promise<string | null>;
}

/** One job's work for a thread: the source (as plain data) and where its documents go. */
export interface ThreadTask {
  connector: ThreadConnectorSpec;
  sourceId: string;
  collectionId: string;
}

/**
 * Runs ingestion jobs' data paths on threads of their own (job-thread.worker.ts), one thread per
 * job, gone when the job ends so an idle app holds none. Under load the API's event loop takes
 * tens of milliseconds a turn, and a job that waited for several turns per file took 20 times
 * as long (issue 20). This thread keeps the job's row: the counters posted to it go into
 * `progress`; a cancel or shutdown (signal) is passed on and the job ends as it would here.
 */
export class JobThreads {
  constructor(
    private readonly index: ThreadableIndex,
    private readonly disk: { dir: string; minFreeBytes: number } | null,
  ) {}

  run(task: ThreadTask, progress: JobCounters, signal: AbortSignal): Promise<void> {
    const writer = this.index.writerPort();
    const start: JobThreadStart = { ...task, disk: this.disk, writer };
    const worker = new Worker(WORKER.file, {
      workerData: start,
      transferList: [writer],
      execArgv: WORKER.execArgv,
      resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB },
    });
    const send = (message: ToJobThread) => worker.postMessage(message);
    return new Promise<void>((resolve, reject) => {
      let ended = false;
      const end = (error: Error | null) => {
        if (ended) return;
        ended = true;
        signal.removeEventListener("abort", onAbort);
        void worker.terminate();
        if (error) reject(error);
        else resolve();
      };
      const onAbort = () => send({ type: "cancel" });
      signal.addEventListener("abort", onAbort, { once: true });
      if (signal.aborted) onAbort();
      worker.on("message", (message: FromJobThread) => {
        switch (message.type) {
          case "progress":
            return progress.adopt(message.row);
          case "ask":
            return void this.answer(message).then(send);
          case "done":
            return end(null);
          case "failed": {
            const error = fromWire(message.error);
            if (error instanceof IndexDamagedError) this.index.noteDamaged(task.collectionId);
            return end(error);
          }
        }
      });
      // A thread that dies (out of memory, an uncaught error) fails its job, never the process.
      worker.on("error", (error) => end(new Error(`The ingestion job's thread stopped: ${error.message}`)));
      worker.on("exit", (code) => end(new Error(`The ingestion job's thread stopped (exit code ${code})`)));
    });
  }

  private async answer(message: Extract<FromJobThread, { type: "ask" }>): Promise<ToJobThread> {
    try {
      const [collectionId, sourceId] = message.args;
      const result = message.method === "indexedState" ? await this.index.indexedState(collectionId, sourceId) : await this.index.moveAside(collectionId);
      return { type: "answer", id: message.id, ok: true, result };
    } catch (error) {
      return { type: "answer", id: message.id, ok: false, error: toWire(error) };
    }
  }
}
