import { Worker, type MessagePort } from "node:worker_threads";
import type { ThreadConnectorSpec } from "../connectors/thread-connector";
import { IndexDamagedError } from "../search/index-damage";
import { WORKER_YOUNG_GENERATION_MB, workerScript } from "../worker-script";
import { trimMalloc } from "../memory/glibc-malloc";
import type { JobCounters } from "./job-counters";
import type { JobHostCalls, JobThreadCalls, JobThreadData } from "./job-thread-protocol";
import { Caller, serve } from "../threads/rpc";
import { JOB_ERROR_KINDS } from "./job-interrupted";
import type { OcrSettings } from "../config";

const WORKER = workerScript(__filename, "job-thread.worker");
/**
 * An idle job thread ends after this long: jobs within minutes of each other (a schedule, a
 * re-run after a look at the results, a few pipelines triggered together) share one warm thread,
 * an idle app holds none. Starting the thread again costs ~80 ms on the 2-core machine (~40 ms
 * for Node to start a thread, ~35 ms to load the job's modules): a third of a no-change re-run
 * of 2,000 files (decision 0540). Idle, with its parsers stopped, the server holds ~33 MB more for it.
 */
const JOB_THREAD_IDLE_MS = 300_000;

/**
 * The job thread's parser threads stop after this long without a file, well before the thread:
 * they hold most of its memory (pdf.js, PDFium, their heaps: ~50 MB after the bench's corpus)
 * and a re-run that finds nothing changed needs none of them.
 */
const PARSERS_IDLE_MS = 30_000;

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
  /** The job ended with its writes done through the writer thread: the file needs no reader's check (ThreadedSqliteIndex.noteWritten). */
  noteWritten(collectionId: string): void;
  moveAside(collectionId: string): Promise<string | null>;
}

export interface JobThreadsOptions {
  /** How long the thread stays without a job before it ends. Default JOB_THREAD_IDLE_MS. */
  idleMs?: number;
  /** How long its parser threads stay without a file before they stop. Default PARSERS_IDLE_MS. */
  parsersIdleMs?: number;
  /**
   * Runs AFTER_WORK_DELAY_MS after the last running job has ended (unless another job started
   * meanwhile), again as long after its parser threads have stopped, and when the idle thread
   * has ended. Default:
   * malloc_trim, giving back to the OS what they freed, which glibc's arenas keep otherwise
   * (13 MB a job on the bench corpus, memory/glibc-malloc.ts).
   */
  afterWork?: () => void;
  /** How the thread's parsers read pictures (config.ts OCR settings). Default: the parser pool's. */
  ocr?: OcrSettings;
}

/** One job's work for the thread: the source (as plain data) and where its documents go. */
export interface ThreadTask {
  connector: ThreadConnectorSpec;
  sourceId: string;
  collectionId: string;
  /** JobThreadTask.permissionServer; absent: a plain source. */
  permissionServer?: string | null;
}

/** The job thread and the calls waiting for its answers (a run's answer is how it ended). */
interface JobThread {
  worker: Worker;
  calls: Caller<JobThreadCalls>;
}

/**
 * Runs ingestion jobs' data paths on a thread of their own (job-thread.worker.ts). Under load the
 * API's event loop takes tens of milliseconds a turn, and a job that waited for several turns per
 * file took 20 times as long (issue 20). This thread keeps each job's row: the counters posted
 * from the job thread go into its `progress`; a cancel or shutdown (signal) is passed on and the
 * job ends as it would here.
 */
export class JobThreads {
  private current: JobThread | null = null;
  /** Each running job's counters, by its run number. */
  private readonly runs = new Map<number, JobCounters>();
  private nextRun = 1;
  private idle: NodeJS.Timeout | null = null;
  private afterWorkTimers: NodeJS.Timeout[] = [];

  private readonly idleMs: number;
  private readonly parsersIdleMs: number;
  private readonly afterWork: () => void;

  private readonly ocr: OcrSettings | null;

  constructor(
    private readonly index: ThreadableIndex,
    private readonly disk: JobThreadData["disk"],
    options: JobThreadsOptions = {},
  ) {
    this.idleMs = options.idleMs ?? JOB_THREAD_IDLE_MS;
    this.parsersIdleMs = options.parsersIdleMs ?? PARSERS_IDLE_MS;
    this.ocr = options.ocr ?? null;
    this.afterWork = options.afterWork ?? trimMalloc;
  }

  async run(task: ThreadTask, progress: JobCounters, signal: AbortSignal): Promise<void> {
    this.cancelAfterWork();
    const thread = this.thread();
    const id = this.nextRun++;
    const writer = this.index.writerPort(task.collectionId);
    const onAbort = () => thread.calls.note("cancel", id);
    this.runs.set(id, progress);
    signal.addEventListener("abort", onAbort, { once: true });
    // A running job holds the process (as its work on this thread would); an idle thread does not.
    thread.worker.ref();
    const ended = thread.calls.callWith(undefined, [writer], "run", [id, { ...task, permissionServer: task.permissionServer ?? null }, writer]);
    if (signal.aborted) onAbort();
    try {
      await ended;
      this.index.noteWritten(task.collectionId);
    } catch (error) {
      if (error instanceof IndexDamagedError) this.index.noteDamaged(task.collectionId);
      throw error;
    } finally {
      signal.removeEventListener("abort", onAbort);
      this.runs.delete(id);
      if (this.runs.size === 0) {
        // A thread that has stopped (closed, died) is ending already: it needs no idle time.
        if (this.current === thread) this.idleFrom(thread.worker);
        this.afterWorkSoon();
      }
    }
  }

  private afterWorkSoon(): void {
    this.cancelAfterWork();
    // Once soon after the job, and once its parser threads have stopped (what they held is freed
    // then) if that is before the thread itself ends, which calls it too. A job that starts
    // meanwhile cancels both (run()), so when one fires no job is running.
    const delays = [AFTER_WORK_DELAY_MS];
    if (this.parsersIdleMs < this.idleMs) delays.push(this.parsersIdleMs + AFTER_WORK_DELAY_MS);
    this.afterWorkTimers = delays.map((delay) => {
      const timer = setTimeout(() => this.afterWork(), delay);
      timer.unref();
      return timer;
    });
  }

  private cancelAfterWork(): void {
    for (const timer of this.afterWorkTimers) clearTimeout(timer);
    this.afterWorkTimers = [];
  }

  /** The job thread's id while it runs (null: none now); for tests and diagnostics. */
  get threadId(): number | null {
    return this.current?.worker.threadId ?? null;
  }

  /** Ends the thread (its jobs fail); call once the queue has stopped. */
  async close(): Promise<void> {
    this.cancelAfterWork();
    if (this.idle) clearTimeout(this.idle);
    const thread = this.current;
    this.current = null;
    thread?.calls.failAll(new Error("The ingestion job thread stopped"));
    await thread?.worker.terminate();
  }

  private thread(): JobThread {
    if (this.idle) clearTimeout(this.idle);
    this.idle = null;
    if (this.current) return this.current;
    const worker = new Worker(WORKER.file, {
      workerData: { disk: this.disk, ocr: this.ocr, parsersIdleMs: this.parsersIdleMs } satisfies JobThreadData,
      execArgv: WORKER.execArgv,
      resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB, maxOldGenerationSizeMb: JOB_THREAD_OLD_GENERATION_MB },
    });
    const thread: JobThread = {
      worker,
      // Nothing goes to a thread that has ended (a cancel after it died): its calls have failed already.
      calls: new Caller<JobThreadCalls>((message, transfer) => this.current === thread && worker.postMessage(message, transfer), JOB_ERROR_KINDS),
    };
    serve<JobHostCalls>(
      worker,
      {
        progress: (run, row, flush) => this.runs.get(run)?.adopt(row, flush),
        moveAside: (collectionId) => this.index.moveAside(collectionId),
      },
      (reply) => void thread.calls.settle(reply),
    );
    // A thread that dies (out of memory, an uncaught error) fails its jobs, never the process; the next job starts another.
    const died = (error: Error) => {
      if (this.current !== thread) return;
      this.current = null;
      thread.calls.failAll(new Error(`The ingestion job thread stopped: ${error.message}`));
    };
    worker.on("error", died);
    worker.on("exit", (code) => died(new Error(`exit code ${code}`)));
    this.current = thread;
    return thread;
  }

  private idleFrom(worker: Worker): void {
    worker.unref();
    if (this.idle) clearTimeout(this.idle);
    this.idle = setTimeout(() => {
      this.idle = null;
      if (this.runs.size > 0 || !this.current) return;
      const { worker } = this.current;
      this.current = null;
      void worker.terminate().then(() => this.afterWork());
    }, this.idleMs);
    this.idle.unref();
  }
}
