import os from "node:os";
import { Worker } from "node:worker_threads";
import { isSupported } from "./file-types";
import type { ParseReply, ParseRequest, ParseWorkerData } from "./parse.worker";
import { ParseError, type ParseResult } from "./parse-types";
import { workerScript } from "../../worker-script";

export interface ParserPoolOptions {
  /** Worker threads. Default min(2, CPUs). */
  size?: number;
  /** A parse taking longer than this is killed (worker terminated and replaced). Default 60 000. */
  timeoutMs?: number;
  /** V8 old-generation heap limit per worker; a parse going over it is killed. Default 256. */
  maxHeapMb?: number;
}

interface Job {
  id: number;
  fileName: string;
  bytes: Uint8Array;
  resolve: (result: ParseResult) => void;
  reject: (error: ParseError) => void;
}

interface Slot {
  worker: Worker;
  job: Job | null;
  timer: NodeJS.Timeout | null;
}

const WORKER = workerScript(__filename, "parse.worker");

/**
 * Parses files (text extraction + chunking) in worker threads, so a slow, crashing or
 * memory-hungry parser costs one file, never the server. Requests beyond the pool size queue.
 *
 * Test hooks: when SLUICE_PARSER_TEST_HOOKS=1 is set in this process at construction time, file
 * names starting with __sluice_test_crash__ / __sluice_test_oom__ / __sluice_test_hang__ make the
 * worker crash / allocate until out of memory / loop forever (see parse.worker.ts). Tests only.
 */
export class ParserPool {
  private readonly size: number;
  private readonly timeoutMs: number;
  private readonly maxHeapMb: number;
  private readonly testHooks: boolean;
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private nextId = 1;
  private closed = false;

  constructor(opts: ParserPoolOptions = {}) {
    this.size = Math.max(1, Math.floor(opts.size ?? Math.min(2, os.availableParallelism())));
    this.timeoutMs = opts.timeoutMs ?? 60_000;
    this.maxHeapMb = opts.maxHeapMb ?? 256;
    this.testHooks = process.env.SLUICE_PARSER_TEST_HOOKS === "1";
  }

  /**
   * Parses one file. Unsupported types resolve as skipped without starting a worker. The pool takes
   * ownership of `bytes`: when it spans a whole ArrayBuffer, that buffer is transferred to the
   * worker (not copied) and the caller's view is left detached (empty).
   * Rejects only with ParseError.
   */
  parse(fileName: string, bytes: Uint8Array): Promise<ParseResult> {
    if (this.closed) return Promise.reject(new ParseError("The parser pool is closed"));
    if (!isSupported(fileName)) return Promise.resolve({ kind: "skipped", reason: "unsupported file type" });
    return new Promise<ParseResult>((resolve, reject) => {
      this.queue.push({ id: this.nextId++, fileName, bytes, resolve, reject });
      this.dispatch();
    });
  }

  /** Rejects queued and running parses, and terminates every worker so the process can exit. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const job of this.queue.splice(0)) job.reject(new ParseError("The parser pool is closed"));
    const slots = this.slots.splice(0);
    await Promise.all(
      slots.map(async (slot) => {
        this.finish(slot, null, new ParseError("The parser pool is closed"));
        slot.worker.removeAllListeners();
        slot.worker.on("error", () => undefined); // a late error from a dying worker must not go unhandled
        await slot.worker.terminate();
      }),
    );
  }

  private dispatch(): void {
    while (!this.closed && this.queue.length > 0) {
      let slot = this.slots.find((s) => s.job === null);
      if (!slot) {
        if (this.slots.length >= this.size) return;
        slot = this.spawn();
      }
      const job = this.queue.shift()!;
      this.start(slot, job);
    }
  }

  private spawn(): Slot {
    const workerData: ParseWorkerData = { testHooks: this.testHooks };
    const worker = new Worker(WORKER.file, {
      workerData,
      execArgv: WORKER.execArgv,
      resourceLimits: { maxOldGenerationSizeMb: this.maxHeapMb },
      stdout: false,
      stderr: false,
    });
    const slot: Slot = { worker, job: null, timer: null };
    worker.on("message", (reply: ParseReply) => {
      if (!slot.job || slot.job.id !== reply.id) return;
      if (reply.ok) this.finish(slot, reply.result, null);
      else this.finish(slot, null, new ParseError(reply.message));
      this.dispatch();
    });
    worker.on("error", (err: Error & { code?: string }) => {
      const error =
        err.code === "ERR_WORKER_OUT_OF_MEMORY"
          ? new ParseError(`Parsing ran out of memory (limit ${this.maxHeapMb} MB)`)
          : new ParseError(`The parser crashed: ${err.message}`);
      this.replace(slot, error);
    });
    worker.on("exit", (code) => {
      this.replace(slot, new ParseError(`The parser crashed (worker exited with code ${code})`));
    });
    this.slots.push(slot);
    return slot;
  }

  private start(slot: Slot, job: Job): void {
    slot.job = job;
    slot.timer = setTimeout(() => {
      const seconds = Number((this.timeoutMs / 1000).toFixed(1));
      this.replace(slot, new ParseError(`Parsing timed out after ${seconds} s`));
    }, this.timeoutMs);
    const request: ParseRequest = { id: job.id, fileName: job.fileName, bytes: job.bytes };
    job.bytes = new Uint8Array(0); // the worker has the bytes now; don't keep them alive here
    const buffer = request.bytes.buffer;
    const transferable =
      buffer instanceof ArrayBuffer && request.bytes.byteOffset === 0 && request.bytes.byteLength === buffer.byteLength;
    try {
      slot.worker.postMessage(request, transferable ? [buffer] : []);
    } catch {
      try {
        slot.worker.postMessage(request); // e.g. Node's pooled Buffer memory is marked untransferable: copy
      } catch (err) {
        this.replace(slot, new ParseError(`Could not hand the file to a parser: ${err instanceof Error ? err.message : String(err)}`));
      }
    }
  }

  /** Settles the slot's job (if any) and clears its timer. */
  private finish(slot: Slot, result: ParseResult | null, error: ParseError | null): void {
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = null;
    const job = slot.job;
    slot.job = null;
    if (!job) return;
    if (error) job.reject(error);
    else job.resolve(result!);
  }

  /** Fails the slot's job, kills its worker and lets a fresh one take over the queue. */
  private replace(slot: Slot, error: ParseError): void {
    const index = this.slots.indexOf(slot);
    if (index === -1) return; // already replaced (error then exit) or the pool is closed
    this.slots.splice(index, 1);
    this.finish(slot, null, error);
    slot.worker.removeAllListeners();
    slot.worker.on("error", () => undefined);
    void slot.worker.terminate();
    this.dispatch();
  }
}
