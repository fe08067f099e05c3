import { Worker } from "node:worker_threads";
import { ServiceUnavailableError } from "../errors";
import { INDEX_ERROR_KINDS } from "./index-damage";
import { PendingCalls, type CallReply } from "../threads/pending-calls";
import type { Args, CallRequest, Result } from "../threads/rpc";
import { fromWire } from "../threads/wire-error";
import { WORKER_YOUNG_GENERATION_MB, workerScript } from "../worker-script";
import type { IndexReaderCalls } from "./index-reader.worker";

const WORKER = workerScript(__filename, "index-reader.worker");

/** What a client is told to wait when the queue is full: a search takes milliseconds, so the queue drains within one. */
export const BUSY_RETRY_AFTER_SECONDS = 1;
const BUSY_DETAIL = "The server is busy: too many searches are waiting; try again in a moment";

export interface ReaderPoolOptions {
  dir: string;
  /** Reader threads (SEARCH_READERS). */
  threads: number;
  /** Requests waiting for a free thread at most (SEARCH_QUEUE_LIMIT); past it, 503 with Retry-After. */
  queueLimit: number;
}

/** Calls that take a thread for their time and queue for one; the others go to a given thread (or all) at once. */
type PooledMethod = "search" | "listDocuments";
type ControlMethod = "check" | "release" | "markDamaged";

interface Task {
  /** A call run() checked against IndexReaderCalls. */
  method: PooledMethod;
  args: unknown[];
  resolve(value: unknown): void;
  reject(error: Error): void;
}

interface Reader {
  worker: Worker;
  /** The pooled task it runs, if any (control messages such as release are not counted). */
  busy: Task | null;
  /** Messages sent and not yet answered: the thread keeps the process alive only while this is above zero. */
  outstanding: number;
}

/**
 * Searches (and document pages) of the desktop index on reader threads, so they run on every
 * core instead of queueing on the one JavaScript thread. Each thread has its own read-only
 * connection per collection file; WAL lets them read beside the writer thread. A task goes to an
 * idle thread, else waits in a bounded FIFO queue; when that is full the request is shed with
 * 503 and Retry-After rather than left to wait for seconds. Threads start on first use.
 */
export class IndexReaderPool {
  private readers: Reader[] = [];
  private readonly queue: Task[] = [];
  /** Control messages (check, release, markDamaged) waiting for their answer, each with the thread it went to. */
  private readonly control = new PendingCalls<Reader>(INDEX_ERROR_KINDS);
  /** Ids of pooled tasks' requests (their answers are matched by the thread that was given the task). */
  private nextTask = 1;
  private closed = false;

  constructor(private readonly options: ReaderPoolOptions) {}

  run<M extends PooledMethod>(method: M, ...args: Args<IndexReaderCalls, M>): Promise<Result<IndexReaderCalls, M>> {
    if (this.closed) return Promise.reject(new Error("The index is closed"));
    this.startThreads();
    return new Promise((resolve, reject) => {
      const task: Task = { method, args, resolve: resolve as (value: unknown) => void, reject };
      const idle = this.readers.find((r) => r.busy === null);
      if (idle) return this.dispatch(idle, task);
      if (this.queue.length >= this.options.queueLimit) return reject(new ServiceUnavailableError(BUSY_DETAIL, BUSY_RETRY_AFTER_SECONDS));
      this.queue.push(task);
    });
  }

  /** Every thread lets go of one collection's file (it is about to be deleted or moved), or takes it for damaged. */
  async broadcast(method: Exclude<ControlMethod, "check">, collectionId: string): Promise<void> {
    await Promise.all(this.readers.map((reader) => this.controlMessage(reader, method, collectionId)));
  }

  /**
   * SqliteFtsIndex.check on the least busy thread (one is started if none runs): outside the
   * bounded queue, since a collection's first read must not be shed, and off the API's thread
   * and the writer's, where a running job's batches would hold it up.
   */
  check(collectionId: string): Promise<"missing" | "older" | "current"> {
    if (this.closed) return Promise.reject(new Error("The index is closed"));
    if (this.readers.length === 0) this.readers.push(this.spawn());
    const reader = this.readers.reduce((least, r) => (r.outstanding < least.outstanding ? r : least));
    return this.controlMessage(reader, "check", collectionId);
  }

  private controlMessage<M extends ControlMethod>(reader: Reader, method: M, collectionId: string): Promise<Result<IndexReaderCalls, M>> {
    return this.control.call(reader, (id) => {
      this.sent(reader);
      reader.worker.postMessage({ id: -id, method, args: [collectionId] } satisfies CallRequest<IndexReaderCalls>);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const task of this.queue.splice(0)) task.reject(new Error("The index is closed"));
    const readers = this.readers;
    this.readers = [];
    await Promise.all(readers.map((r) => r.worker.terminate()));
  }

  private startThreads(): void {
    while (this.readers.length < this.options.threads) this.readers.push(this.spawn());
  }

  private spawn(): Reader {
    const worker = new Worker(WORKER.file, {
      workerData: { dir: this.options.dir },
      execArgv: WORKER.execArgv,
      resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB },
    });
    const reader: Reader = { worker, busy: null, outstanding: 0 };
    worker.on("message", (reply: CallReply) => {
      if (--reader.outstanding === 0) worker.unref();
      // Control messages go with negative ids, pooled tasks with positive ones.
      if (reply.id < 0) return void this.control.settle({ ...reply, id: -reply.id });
      const task = reader.busy;
      reader.busy = null;
      if (reply.ok) task?.resolve(reply.result);
      else task?.reject(fromWire(reply.error, INDEX_ERROR_KINDS));
      this.next(reader);
    });
    // A thread that dies fails its task only; a new one takes its place.
    const replace = (error: Error) => {
      if (!this.readers.includes(reader)) return;
      this.readers = this.readers.filter((r) => r !== reader);
      reader.busy?.reject(new Error(`The search thread stopped: ${error.message}`));
      reader.busy = null;
      this.control.failAll(new Error(`The search thread stopped: ${error.message}`), (to) => to === reader);
      if (this.closed) return;
      const fresh = this.spawn();
      this.readers.push(fresh);
      this.next(fresh);
    };
    worker.on("error", replace);
    worker.on("exit", (code) => replace(new Error(`exit code ${code}`)));
    // Idle readers must not keep the process alive.
    worker.unref();
    return reader;
  }

  private next(reader: Reader): void {
    const task = this.queue.shift();
    if (task) this.dispatch(reader, task);
  }

  /** An idle thread must not keep the process alive, a working one must (its caller waits for it). */
  private sent(reader: Reader): void {
    if (reader.outstanding++ === 0) reader.worker.ref();
  }

  private dispatch(reader: Reader, task: Task): void {
    reader.busy = task;
    this.sent(reader);
    reader.worker.postMessage({ id: this.nextTask++, method: task.method, args: task.args } as CallRequest<IndexReaderCalls>);
  }
}
