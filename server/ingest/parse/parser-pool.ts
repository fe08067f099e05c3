import os from "node:os";
import { Worker } from "node:worker_threads";
import { isSupported } from "./file-types";
import type { ParseWorkerData } from "./parse-batch";
import type { ParserCalls, ParserHostCalls } from "./parse.worker";
import { isReply, type CallRequest, type ReplyOf } from "../../threads/rpc";
import { ALLOWANCE_CELLS, allowanceBuffer, releaseThreadCell } from "./ocr/ocr-allowance";
import { DEFAULT_OCR, type OcrSettings } from "./ocr/ocr-settings";
import { ParseError, type ParseResult } from "./parse-types";
import { PARSER_YOUNG_GENERATION_MB, workerScript } from "../../worker-script";

export interface ParserPoolOptions {
  /** Worker threads. Default: the CPUs less one, 1 to 4 (see defaultPoolSize). */
  size?: number;
  /**
   * A parse taking longer than this, from when its thread is ready, is killed (worker terminated
   * and replaced). A page sent to OCR has three times this (decision 0496: for the `tesseract`
   * command, in its CPU time, held by the thread; the pool's timer then only catches a thread
   * that stopped saying it is alive). Default 60 000.
   */
  timeoutMs?: number;
  /** How pictures are read (OCR, OCR_LANGUAGES, OCR_ENGINE). Default: on, English, the faster engine installed. */
  ocr?: OcrSettings;
  /** V8 old-generation heap limit per worker; a parse going over it is killed. Default 256. */
  maxHeapMb?: number;
  /**
   * Spare workers: started beyond `size` only while a file has waited `spareAfterMs` behind busy
   * workers (a slow PDF holding the only parser), stopped again after `spareIdleMs` without
   * work. Default: the CPUs left over by the default size (so every core can parse a backlog of
   * PDFs); 0 when `size` is given.
   */
  spares?: number;
  /** How long a file waits behind busy workers before a spare starts. Default 1 000. */
  spareAfterMs?: number;
  /** How long a spare stays without work before it stops (its memory goes back). Default 5 000. */
  spareIdleMs?: number;
  /**
   * How long a steady worker stays without work before it stops (its memory goes back); the
   * next file starts one again. Default: never, it lives as long as the pool.
   */
  steadyIdleMs?: number;
  /**
   * Files larger than this wait for a steady worker: two huge PDFs parsed at once would each
   * hold pdf.js's 130+ MB. Default 4 MB.
   */
  spareMaxFileBytes?: number;
  /** V8 old-generation heap limit of a spare. A file running out of it is parsed again on a steady worker. Default 128. */
  spareHeapMb?: number;
}

interface Job {
  fileName: string;
  bytes: Uint8Array;
  /** Retried on its own after its batch's worker died: it must not share a worker again. */
  alone: boolean;
  /** Ran out of memory on a spare (smaller heap): retried on a steady worker, never failed for it. */
  steadyOnly: boolean;
  /** performance.now() when it was queued: how long it waited decides whether a spare starts. */
  queuedAt: number;
  /** Where the parse is, in words (a page going to OCR). */
  onProgress?: (text: string) => void;
  resolve: (result: ParseResult) => void;
  reject: (error: ParseError) => void;
}

interface Slot {
  worker: Worker;
  /** The batch the worker is parsing (empty when idle) and its request id. */
  jobs: Job[];
  batchId: number;
  timer: NodeJS.Timeout | null;
  /**
   * The thread has loaded its parsers (its `ready` note): a parse's time limit runs from then,
   * since loading them took seconds on a loaded machine (pdf.js and the rest at nice 10).
   */
  ready: boolean;
  /** Started beyond the pool's size for a backlog; stops when idle for spareIdleMs (a steady one after steadyIdleMs, if set). */
  spare: boolean;
  idleTimer: NodeJS.Timeout | null;
  /** Its cell in the OCR allowance (ocr-allowance.ts), free again once the worker is gone. */
  cell: number;
  /** The `tesseract` processes it runs now: ended with it, since they outlive a terminated thread. */
  children: Set<number>;
  /** Its batch has sent a page to OCR: the time limit is a page's. */
  inOcr: boolean;
}

/**
 * Files queued while a worker is busy go to it together, in one message each way: every
 * message wakes a thread, which costs more than parsing a small text file. Only small files
 * share a batch, so one batch never holds much memory or parse time.
 */
const MAX_BATCH_FILES = 32;
const MAX_BATCH_BYTES = 4 * 1024 * 1024;

const WORKER = workerScript(__filename, "parse.worker");

/**
 * A page sent to OCR may take this many times the parse time limit: from the note that it
 * started, or from the thread's last word that its engine is within its limits (for the
 * `tesseract` command, CPU time; decision 0496).
 */
const OCR_PAGE_LIMITS = 3;

const CANCELLED = "Parsing stopped: the job was cancelled";

/** Files larger than this wait for a steady worker (ParserPoolOptions.spareMaxFileBytes's default). */
export const SPARE_MAX_FILE_BYTES = 4 * 1024 * 1024;

/**
 * The order to hand files to the pool: those only a steady worker takes (over
 * SPARE_MAX_FILE_BYTES) first, each group in its own order. A huge PDF parses for seconds; met
 * early, it runs while the other files flow through the spare, rather than alone at the end of
 * a job with no other file finishing (the real-corpus bench's last stall).
 */
export function steadyOnlyFirst<T extends { size: number }>(files: T[]): T[] {
  return [...files.filter((f) => f.size > SPARE_MAX_FILE_BYTES), ...files.filter((f) => f.size <= SPARE_MAX_FILE_BYTES)];
}

/**
 * One core stays for the rest of an ingestion (the API, the SMB client, the index writer,
 * the file server itself when local). On a 2-core machine a second parser only added
 * compile and message overhead: `npm run bench` used less CPU and no more time with one.
 */
function defaultPoolSize(): number {
  return Math.min(4, Math.max(1, os.availableParallelism() - 1));
}

/**
 * The cores the default size leaves: one spare on a 2-core machine. A folder of PDFs is
 * parse-bound (pdf.js takes a second or more on a big one), and with one parser the other core
 * sat idle and no file finished while a big PDF was parsed (the real-corpus bench's stalls).
 */
function defaultSpares(size: number): number {
  return Math.max(0, Math.min(4, os.availableParallelism()) - size);
}

/**
 * Parses files (text extraction + chunking) in worker threads, so a slow, crashing or
 * memory-hungry parser costs one file, never the server. Requests beyond the pool size queue.
 *
 * Test hooks: when SLUICE_PARSER_TEST_HOOKS=1 is set in this process at construction time, file
 * names starting with __sluice_test_crash__ / __sluice_test_oom__ / __sluice_test_hang__ /
 * __sluice_test_wait__ make the worker crash / allocate until out of memory / loop forever / wait
 * until the file its contents name exists, and __sluice_test_ocr_hang__ note a page sent to OCR
 * then loop forever (see parse-batch.ts). Tests only.
 */
export class ParserPool {
  private readonly size: number;
  private readonly timeoutMs: number;
  private readonly maxHeapMb: number;
  private readonly testHooks: boolean;
  private readonly ocr: OcrSettings;
  private readonly spares: number;
  private readonly spareAfterMs: number;
  private readonly spareIdleMs: number;
  private readonly steadyIdleMs: number | null;
  private readonly spareMaxFileBytes: number;
  private readonly spareHeapMb: number;
  /** Set while the queue's head waits for its turn to start a spare. */
  private spareCheck: NodeJS.Timeout | null = null;
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private nextBatchId = 1;
  /** The OCR allowance shared by the threads (ocr-allowance.ts), and its cells no thread has. */
  private readonly allowance = allowanceBuffer();
  private readonly freeCells = Array.from({ length: ALLOWANCE_CELLS - 1 }, (_, i) => i);
  /** Requests sent to workers (a batch is one); for tests and diagnostics. */
  messagesSent = 0;
  private closed = false;

  constructor(opts: ParserPoolOptions = {}) {
    this.size = Math.max(1, Math.floor(opts.size ?? defaultPoolSize()));
    this.timeoutMs = opts.timeoutMs ?? 60_000;
    this.ocr = opts.ocr ?? DEFAULT_OCR;
    this.maxHeapMb = opts.maxHeapMb ?? 256;
    this.spares = Math.max(0, Math.floor(opts.spares ?? (opts.size === undefined ? defaultSpares(this.size) : 0)));
    this.spareAfterMs = opts.spareAfterMs ?? 1_000;
    this.spareIdleMs = opts.spareIdleMs ?? 5_000;
    this.steadyIdleMs = opts.steadyIdleMs ?? null;
    this.spareMaxFileBytes = opts.spareMaxFileBytes ?? SPARE_MAX_FILE_BYTES;
    this.spareHeapMb = Math.min(opts.spareHeapMb ?? 128, this.maxHeapMb);
    this.testHooks = process.env.SLUICE_PARSER_TEST_HOOKS === "1";
  }

  /**
   * Parses one file. Unsupported types resolve as skipped without starting a worker. The pool takes
   * ownership of `bytes`: when it spans a whole ArrayBuffer, that buffer is transferred to the
   * worker (not copied) and the caller's view is left detached (empty).
   * Rejects only with ParseError. When `signal` aborts (its job was cancelled), the file leaves
   * the queue or its parse ends at once, its OCR processes with it.
   */
  parse(fileName: string, bytes: Uint8Array, onProgress?: (text: string) => void, signal?: AbortSignal): Promise<ParseResult> {
    if (this.closed) return Promise.reject(new ParseError("The parser pool is closed"));
    if (!isSupported(fileName)) return Promise.resolve({ kind: "skipped", reason: "unsupported file type" });
    if (signal?.aborted) return Promise.reject(new ParseError(CANCELLED));
    return new Promise<ParseResult>((resolve, reject) => {
      const job: Job = { fileName, bytes, alone: false, steadyOnly: false, queuedAt: performance.now(), onProgress, resolve, reject };
      if (signal) {
        const cancel = () => this.cancel(job);
        signal.addEventListener("abort", cancel, { once: true });
        const done = () => signal.removeEventListener("abort", cancel);
        job.resolve = (result) => {
          done();
          resolve(result);
        };
        job.reject = (error) => {
          done();
          reject(error);
        };
      }
      this.queue.push(job);
      this.dispatch();
    });
  }

  /**
   * A cancelled job's file: out of the queue, or, while parsed, its worker ends (with its OCR
   * processes) and the others of its batch are parsed again on their own.
   */
  private cancel(job: Job): void {
    const queued = this.queue.indexOf(job);
    if (queued !== -1) {
      this.queue.splice(queued, 1);
      job.reject(new ParseError(CANCELLED));
      return;
    }
    const slot = this.slots.find((s) => s.jobs.includes(job));
    if (!slot) return;
    slot.jobs = slot.jobs.filter((other) => other !== job);
    job.reject(new ParseError(CANCELLED));
    this.replace(slot, new ParseError(CANCELLED));
  }

  /** Worker threads running now (spares included); for tests and diagnostics. */
  get workers(): number {
    return this.slots.length;
  }

  /** Rejects queued and running parses, and terminates every worker so the process can exit. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.spareCheck) clearTimeout(this.spareCheck);
    this.spareCheck = null;
    for (const job of this.queue.splice(0)) job.reject(new ParseError("The parser pool is closed"));
    const slots = this.slots.splice(0);
    await Promise.all(
      slots.map(async (slot) => {
        for (const job of this.release(slot)) job.reject(new ParseError("The parser pool is closed"));
        await this.end(slot);
      }),
    );
  }

  private dispatch(): void {
    while (!this.closed && this.queue.length > 0) {
      // A steady worker first, so an idle spare can run out its idle time and stop.
      const steady = this.slots.find((s) => s.jobs.length === 0 && !s.spare);
      if (steady || this.slots.filter((s) => !s.spare).length < this.size) {
        this.start(steady ?? this.spawn(false), this.takeBatch(0, () => true));
        continue;
      }
      const forSpare = (job: Job) => !job.steadyOnly && job.bytes.byteLength <= this.spareMaxFileBytes;
      const first = this.queue.findIndex(forSpare);
      if (first === -1) return;
      let spare = this.slots.find((s) => s.jobs.length === 0);
      if (!spare && this.slots.filter((s) => s.spare).length < this.spares && this.waitedForSpare(this.queue[first])) spare = this.spawn(true);
      if (!spare) return;
      this.start(spare, this.takeBatch(first, forSpare));
    }
  }

  /**
   * Whether a job has waited long enough behind busy workers for a spare to start; if not
   * yet, dispatch() runs again when it will have (unless a worker frees up first).
   */
  private waitedForSpare(job: Job): boolean {
    const waited = performance.now() - job.queuedAt;
    if (waited >= this.spareAfterMs) return true;
    if (!this.spareCheck) {
      this.spareCheck = setTimeout(() => {
        this.spareCheck = null;
        this.dispatch();
      }, Math.ceil(this.spareAfterMs - waited));
      this.spareCheck.unref(); // queued work alone must not keep a process alive; a running worker does
    }
    return false;
  }

  /** A spare without work stops after spareIdleMs, a steady worker after steadyIdleMs (if set); the next backlog or file starts another. */
  private idle(slot: Slot): void {
    const idleMs = slot.spare ? this.spareIdleMs : this.steadyIdleMs;
    if (idleMs === null || slot.jobs.length > 0 || this.closed) return;
    slot.idleTimer = setTimeout(() => {
      slot.idleTimer = null;
      const index = this.slots.indexOf(slot);
      if (index === -1 || slot.jobs.length > 0) return;
      this.slots.splice(index, 1);
      void this.end(slot);
    }, idleMs);
    slot.idleTimer.unref();
  }

  /** The job at `from`, with the small ones queued right behind it (that `may` take) when it is small too. */
  private takeBatch(from: number, may: (job: Job) => boolean): Job[] {
    const batch = this.queue.splice(from, 1);
    let bytes = batch[0].bytes.byteLength;
    const fits = (job: Job) => !job.alone && may(job) && bytes + job.bytes.byteLength <= MAX_BATCH_BYTES;
    if (!fits(batch[0])) return batch;
    while (batch.length < MAX_BATCH_FILES && from < this.queue.length && fits(this.queue[from])) {
      const [job] = this.queue.splice(from, 1);
      bytes += job.bytes.byteLength;
      batch.push(job);
    }
    return batch;
  }

  /**
   * Terminates a slot's worker, ends the `tesseract` processes it was running (a terminated
   * thread leaves them running), and gives its OCR allowance back.
   */
  private async end(slot: Slot): Promise<void> {
    slot.worker.removeAllListeners();
    slot.worker.on("error", () => undefined); // a late error from a dying worker must not go unhandled
    const stopped = slot.worker.terminate();
    for (const pid of slot.children) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // It ended by itself meanwhile.
      }
    }
    slot.children.clear();
    await stopped.catch(() => undefined);
    releaseThreadCell(this.allowance, slot.cell);
    this.freeCells.push(slot.cell);
  }

  private spawn(spare: boolean): Slot {
    const cell = this.freeCells.shift() ?? 0;
    const workerData: ParseWorkerData = {
      testHooks: this.testHooks,
      ocr: this.ocr,
      // Every thread the pool may run can read with the command at once: so many processes in all, however they are shared.
      allowance: { buffer: this.allowance, cell, native: this.size + this.spares },
      ocrPageLimitMs: this.timeoutMs * OCR_PAGE_LIMITS,
    };
    const worker = new Worker(WORKER.file, {
      workerData,
      execArgv: WORKER.execArgv,
      resourceLimits: { maxOldGenerationSizeMb: spare ? this.spareHeapMb : this.maxHeapMb, maxYoungGenerationSizeMb: PARSER_YOUNG_GENERATION_MB },
      stdout: false,
      stderr: false,
    });
    const slot: Slot = { worker, jobs: [], batchId: 0, timer: null, ready: false, spare, idleTimer: null, cell, children: new Set(), inOcr: false };
    worker.on("message", (message: ReplyOf<ParserCalls, "parse"> | CallRequest<ParserHostCalls>) => {
      if (!isReply(message)) {
        if (message.method === "progress") {
          // A page of a long scan began: the time limit is per page from here, three times the
          // file's (a page of OCR is known slow work, and a busy machine's seconds are long).
          const [fileName, text] = message.args;
          slot.inOcr = true;
          this.restartPageLimit(slot);
          slot.jobs.find((job) => job.fileName === fileName)?.onProgress?.(text);
          return;
        }
        if (message.method === "alive") {
          // The thread's engine is within its own limits (a process's CPU time): only a thread that stops saying so is hung.
          if (slot.inOcr) this.restartPageLimit(slot);
          return;
        }
        if (message.method === "child") {
          const [pid, running] = message.args;
          if (running) slot.children.add(pid);
          else slot.children.delete(pid);
          return;
        }
        slot.ready = true;
        if (slot.jobs.length > 0) this.limitTime(slot);
        return;
      }
      const reply = message;
      if (slot.jobs.length === 0 || slot.batchId !== reply.id) return;
      const jobs = this.release(slot);
      // parseBatch answers each file's failure in its outcome; a failed call is the thread's own (it should not happen).
      const outcomes = reply.ok ? reply.result : null;
      const missing = reply.ok ? "The parser gave no answer for this file" : `The parser failed: ${reply.error.message}`;
      jobs.forEach((job, i) => {
        const outcome = outcomes?.[i];
        if (outcome?.ok) job.resolve(outcome.result);
        else job.reject(new ParseError(outcome?.message ?? missing));
      });
      this.dispatch();
      this.idle(slot);
    });
    worker.on("error", (err: Error & { code?: string }) => {
      const outOfMemory = err.code === "ERR_WORKER_OUT_OF_MEMORY";
      const error = outOfMemory ? new ParseError(`Parsing ran out of memory (limit ${this.maxHeapMb} MB)`) : new ParseError(`The parser crashed: ${err.message}`);
      this.replace(slot, error, outOfMemory && slot.spare);
    });
    worker.on("exit", (code) => {
      this.replace(slot, new ParseError(`The parser crashed (worker exited with code ${code})`));
    });
    this.slots.push(slot);
    return slot;
  }

  private start(slot: Slot, jobs: Job[]): void {
    if (slot.idleTimer) clearTimeout(slot.idleTimer);
    slot.idleTimer = null;
    slot.jobs = jobs;
    slot.inOcr = false;
    slot.batchId = this.nextBatchId++;
    if (slot.ready) this.limitTime(slot);
    // A lone file's buffer moves to a steady worker (nothing kept here). A batch, or a file on a
    // spare, goes as a copy: if the worker dies, each of its files is parsed again on its own, and
    // a file too big for a spare's heap again on a steady worker. Copies are exact and
    // transferred: a structured clone of a view copies its whole ArrayBuffer (a socket read that
    // holds other replies too, Node's 8 KB pool), garbage the worker keeps until a collection.
    const moveOriginal = jobs.length === 1 && !slot.spare;
    const transfer: ArrayBuffer[] = [];
    const files = jobs.map((job) => {
      const bytes = moveOriginal && spansItsBuffer(job.bytes) ? job.bytes : new Uint8Array(job.bytes);
      transfer.push(bytes.buffer as ArrayBuffer);
      return { fileName: job.fileName, bytes };
    });
    if (moveOriginal) jobs[0].bytes = new Uint8Array(0);
    const request = { id: slot.batchId, method: "parse", args: files } satisfies CallRequest<ParserCalls>;
    this.messagesSent++;
    try {
      slot.worker.postMessage(request, transfer);
    } catch {
      try {
        slot.worker.postMessage(request); // e.g. Node's pooled Buffer memory is marked untransferable: copy
      } catch (err) {
        this.replace(slot, new ParseError(`Could not hand the file to a parser: ${err instanceof Error ? err.message : String(err)}`));
      }
    }
  }

  /** A page of OCR began, or its engine is still within its limits: the page's time from now. */
  private restartPageLimit(slot: Slot): void {
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = null;
    if (slot.jobs.length > 0 && slot.ready) this.limitTime(slot, this.timeoutMs * OCR_PAGE_LIMITS);
  }

  /** The running batch's time limit: past it the thread is taken for hung. */
  private limitTime(slot: Slot, limitMs = this.timeoutMs): void {
    slot.timer = setTimeout(() => {
      const seconds = Number((limitMs / 1000).toFixed(1));
      this.replace(slot, new ParseError(limitMs === this.timeoutMs ? `Parsing timed out after ${seconds} s` : `OCR of a page timed out after ${seconds} s`));
    }, limitMs);
  }

  /** Takes the slot's batch off it and clears its timer. */
  private release(slot: Slot): Job[] {
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = null;
    if (slot.idleTimer) clearTimeout(slot.idleTimer);
    slot.idleTimer = null;
    const jobs = slot.jobs;
    slot.jobs = [];
    return jobs;
  }

  /**
   * Kills the slot's worker and lets a fresh one take over the queue. A lone file fails with
   * `error` (unless `retryOnSteady`: it ran out of a spare's smaller heap, and goes back to the
   * front of the queue for a steady worker); the files of a batch go back to the front of the
   * queue, each to be parsed on its own, so only the file that crashed, hung or ran out of memory fails.
   */
  private replace(slot: Slot, error: ParseError, retryOnSteady = false): void {
    const index = this.slots.indexOf(slot);
    if (index === -1) return; // already replaced (error then exit) or the pool is closed
    this.slots.splice(index, 1);
    const jobs = this.release(slot);
    if (jobs.length === 1 && retryOnSteady) {
      jobs[0].steadyOnly = true;
      this.queue.unshift(jobs[0]);
    } else if (jobs.length === 1) jobs[0].reject(error);
    else {
      for (const job of jobs) job.alone = true;
      this.queue.unshift(...jobs);
    }
    void this.end(slot);
    this.dispatch();
  }
}

/** Whether a view covers the whole of its ArrayBuffer, so moving that buffer moves nothing else. */
function spansItsBuffer(bytes: Uint8Array): boolean {
  return bytes.buffer instanceof ArrayBuffer && bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
}
