import { Worker, type MessagePort } from "node:worker_threads";
import type { ThreadConnectorSpec } from "../connectors/thread-connector";
import { IndexDamagedError } from "../search/index-damage";
import type { IndexedState } from "../search/search-index";
import { WORKER_YOUNG_GENERATION_MB, workerScript } from "../worker-script";
import { trimMalloc } from "../memory/glibc-malloc";
import type { JobCounters } from "./job-counters";
import type { FromJobThread, JobThreadData, ToJobThread } from "./job-thread-protocol";
import { answerCall } from "../threads/pending-calls";
import { fromWire } from "../threads/wire-error";
import { JOB_ERROR_KINDS } from "./job-interrupted";

const WORKER = workerScript(__filename, "job-thread.worker");
/**
 * An idle job thread (and its parser threads) ends after this long: jobs in a row (a schedule,
 * a few pipelines triggered together) share one warm thread, an idle app holds none.
 */
export const JOB_THREAD_IDLE_MS = 30_000;

/**
 * How long after the last job ended `afterWork` runs (unless another job started meanwhile).
 * malloc_trim walks every arena on the API's thread for 7-19 ms (measured on the 2-core machine);
 * run as a job ended, it held back the job's end and the answers waiting then (a no-change re-run
 * of 2,000 files took ~0.17 s, ~0.015 s of it the trim).
 */
export const AFTER_WORK_DELAY_MS = 1000;

/**
 * The job thread's old-generation ceiling. V8 lets a heap grow to up to 4 times what survived
 * its last full collection before the next one when the ceiling is 2 GB or more (a worker's
 * default here), 1.3 to 2 times below it: a job's thread keeps little (~15-20 MB) but makes
 * garbage at the pace files arrive (parsed text on its way to the writer), and in a long job
 * its heap swelled to ~75 MB between collections (`npm run bench -- --memory --files 10000`),
 * where a 2,000-file job ended before it got there. 1 GB still holds the listing of a share of
 * millions of files.
 */
const JOB_THREAD_OLD_GENERATION_MB = 1024;

/** What of the collection index the API's thread lends the job thread: ThreadedSqliteIndex. */
export interface ThreadableIndex {
  writerPort(collectionId: string): MessagePort;
  noteDamaged(collectionId: string): void;
  indexedState(collectionId: string, sourceId: string): Promise<Map<string, IndexedState>>;
  moveAside(collectionId: string): Promise<string | null>;
}

export interface JobThreadsOptions {
  /** How long the thread stays without a job before it ends. Default JOB_THREAD_IDLE_MS. */
  idleMs?: number;
  /**
   * Runs AFTER_WORK_DELAY_MS after the last running job has ended (unless another job started
   * meanwhile) and again when the idle thread has ended. Default:
   * malloc_trim, giving back to the OS what they freed, which glibc's arenas keep otherwise
   * (13 MB a job on the bench corpus, memory/glibc-malloc.ts).
   */
  afterWork?: () => void;
}

/** One job's work for the thread: the source (as plain data) and where its documents go. */
export interface ThreadTask {
  connector: ThreadConnectorSpec;
  sourceId: string;
  collectionId: string;
}

interface Run {
  collectionId: string;
  progress: JobCounters;
  end(error: Error | null): void;
}

/**
 * Runs ingestion jobs' data paths on a thread of their own (job-thread.worker.ts). Under load the
 * API's event loop takes tens of milliseconds a turn, and a job that waited for several turns per
 * file took 20 times as long (issue 20). This thread keeps each job's row: the counters posted
 * from the job thread go into its `progress`; a cancel or shutdown (signal) is passed on and the
 * job ends as it would here.
 */
export class JobThreads {
  private worker: Worker | null = null;
  private readonly runs = new Map<number, Run>();
  private nextRun = 1;
  private idle: NodeJS.Timeout | null = null;
  private afterWorkTimer: NodeJS.Timeout | null = null;

  private readonly idleMs: number;
  private readonly afterWork: () => void;

  constructor(
    private readonly index: ThreadableIndex,
    private readonly disk: JobThreadData["disk"],
    options: JobThreadsOptions = {},
  ) {
    this.idleMs = options.idleMs ?? JOB_THREAD_IDLE_MS;
    this.afterWork = options.afterWork ?? trimMalloc;
  }

  run(task: ThreadTask, progress: JobCounters, signal: AbortSignal): Promise<void> {
    this.cancelAfterWork();
    const worker = this.thread();
    const id = this.nextRun++;
    const writer = this.index.writerPort(task.collectionId);
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => this.send(worker, { type: "cancel", run: id });
      this.runs.set(id, {
        collectionId: task.collectionId,
        progress,
        end: (error) => {
          signal.removeEventListener("abort", onAbort);
          this.runs.delete(id);
          if (this.runs.size === 0) {
            this.idleFrom(worker);
            this.afterWorkSoon();
          }
          if (error) reject(error);
          else resolve();
        },
      });
      signal.addEventListener("abort", onAbort, { once: true });
      // A running job holds the process (as its work on this thread would); an idle thread does not.
      worker.ref();
      worker.postMessage({ type: "start", run: id, task, writer } satisfies ToJobThread, [writer]);
      if (signal.aborted) onAbort();
    });
  }

  private afterWorkSoon(): void {
    this.cancelAfterWork();
    // A job that starts meanwhile cancels it (run()), so when it fires no job is running.
    this.afterWorkTimer = setTimeout(() => {
      this.afterWorkTimer = null;
      this.afterWork();
    }, AFTER_WORK_DELAY_MS);
    this.afterWorkTimer.unref();
  }

  private cancelAfterWork(): void {
    if (this.afterWorkTimer) clearTimeout(this.afterWorkTimer);
    this.afterWorkTimer = null;
  }

  /** Ends the thread (its jobs fail); call once the queue has stopped. */
  async close(): Promise<void> {
    this.cancelAfterWork();
    if (this.idle) clearTimeout(this.idle);
    const worker = this.worker;
    this.worker = null;
    this.fail(new Error("The ingestion job thread stopped"));
    await worker?.terminate();
  }

  private thread(): Worker {
    if (this.idle) clearTimeout(this.idle);
    this.idle = null;
    if (this.worker) return this.worker;
    const worker = new Worker(WORKER.file, {
      workerData: { disk: this.disk } satisfies JobThreadData,
      execArgv: WORKER.execArgv,
      resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB, maxOldGenerationSizeMb: JOB_THREAD_OLD_GENERATION_MB },
    });
    worker.on("message", (message: FromJobThread) => this.receive(worker, message));
    // A thread that dies (out of memory, an uncaught error) fails its jobs, never the process; the next job starts another.
    const died = (error: Error) => {
      if (this.worker !== worker) return;
      this.worker = null;
      this.fail(new Error(`The ingestion job thread stopped: ${error.message}`));
    };
    worker.on("error", died);
    worker.on("exit", (code) => died(new Error(`exit code ${code}`)));
    this.worker = worker;
    return worker;
  }

  private idleFrom(worker: Worker): void {
    worker.unref();
    if (this.idle) clearTimeout(this.idle);
    this.idle = setTimeout(() => {
      this.idle = null;
      if (this.runs.size > 0 || !this.worker) return;
      const worker = this.worker;
      this.worker = null;
      void worker.terminate().then(() => this.afterWork());
    }, this.idleMs);
    this.idle.unref();
  }

  private fail(error: Error): void {
    for (const run of [...this.runs.values()]) run.end(error);
  }

  private send(worker: Worker, message: ToJobThread): void {
    if (this.worker === worker) worker.postMessage(message);
  }

  private receive(worker: Worker, message: FromJobThread): void {
    if (message.type === "ask") {
      const [collectionId, sourceId] = message.args;
      void answerCall((reply) => this.send(worker, { type: "answer", ...reply }), message.id, () =>
        message.method === "indexedState" ? this.index.indexedState(collectionId, sourceId) : this.index.moveAside(collectionId),
      );
      return;
    }
    const run = this.runs.get(message.run);
    if (!run) return;
    switch (message.type) {
      case "progress":
        run.progress.adopt(message.row, message.flush);
        break;
      case "done":
        run.end(null);
        break;
      case "failed": {
        const error = fromWire(message.error, JOB_ERROR_KINDS);
        if (error instanceof IndexDamagedError) this.index.noteDamaged(run.collectionId);
        run.end(error);
        break;
      }
    }
  }
}
