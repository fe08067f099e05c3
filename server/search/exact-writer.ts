import { Worker } from "node:worker_threads";
import type Database from "better-sqlite3";
import { WORKER_YOUNG_GENERATION_MB, workerScript } from "../worker-script";
import { fromWire, toWire, type WireError } from "../threads/wire-error";
import { applyExactBatch, openExactForWrite, type ExactBatch } from "./exact-file";

/**
 * Where a collection's writer sends what it changed in `chunks_fts`, for the exact-words file
 * (exact-file.ts). Batches of one file are applied in the order sent. `apply` resolves once the
 * batch is accepted (not applied): it waits only when too much is already queued, so memory stays
 * bounded while the collection's writer goes on to its next batch.
 */
export interface ExactWriter {
  apply(file: string, batch: ExactBatch): Promise<void>;
  /**
   * Resolves once everything sent for these files (all, without) is applied; answers the files
   * whose batches failed, with the first error of each (the file is then behind: the caller
   * rebuilds it). A failed file's later batches are dropped until `reset`.
   */
  settle(files?: string[]): Promise<Map<string, Error>>;
  /** The file was rebuilt (or deleted): close the connection to it, forget its failure. Sent in order with the batches. */
  reset(file: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * Applies batches on the calling thread through a connection of its own (a SqliteFtsIndex used
 * directly: tests, the writer bench); the same files and rules as the thread.
 */
export class InlineExactWriter implements ExactWriter {
  private readonly files = new ExactFiles();

  async apply(file: string, batch: ExactBatch): Promise<void> {
    this.files.apply(file, batch);
  }

  async settle(files?: string[]): Promise<Map<string, Error>> {
    return this.files.takeFailures(files);
  }

  async reset(file: string): Promise<void> {
    this.files.reset(file);
  }

  async close(): Promise<void> {
    this.files.closeAll();
  }
}

/**
 * The exact files' connections, wherever they run. A file that does not exist is never created
 * here (the collection was dropped, or its writer rebuilds it): its batches are dropped, and the
 * collection's writer finds the file behind or missing when it next opens it.
 */
export class ExactFiles {
  private readonly open = new Map<string, Database.Database>();
  private readonly failed = new Map<string, Error>();

  apply(file: string, batch: ExactBatch): void {
    if (this.failed.has(file)) return;
    try {
      let db = this.open.get(file);
      if (!db) {
        db = openExactForWrite(file);
        this.open.set(file, db);
      }
      applyExactBatch(db, batch);
    } catch (error) {
      this.open.get(file)?.close();
      this.open.delete(file);
      this.failed.set(file, error as Error);
    }
  }

  takeFailures(files?: string[]): Map<string, Error> {
    const taken = new Map<string, Error>();
    for (const [file, error] of this.failed) {
      if (files && !files.includes(file)) continue;
      taken.set(file, error);
    }
    return taken;
  }

  reset(file: string): void {
    this.open.get(file)?.close();
    this.open.delete(file);
    this.failed.delete(file);
  }

  closeAll(): void {
    for (const db of this.open.values()) db.close();
    this.open.clear();
  }
}

const WORKER = workerScript(__filename, "exact-writer.worker");

/**
 * Batches the exact thread may hold, queued or being applied, before the collection's writer
 * waits: two, so it can finish one while the next is queued, and the exact file lags the
 * collection file by at most two transactions. A batch is rowids (ExactBatch), so memory is not
 * the bound: up to 16,000 chunks' rowids each.
 */
export const EXACT_QUEUE_BATCHES = 2;

export type ExactRequest =
  | { kind: "apply"; file: string; batch: ExactBatch }
  | { kind: "settle"; id: number; files?: string[] }
  | { kind: "reset"; id: number; file: string }
  | { kind: "close"; id: number };

export type ExactReply = { kind: "applied" } | { kind: "answer"; id: number; failures?: Array<[string, WireError]> };

/** The exact files written on a thread of their own (started by the index writer thread at its first batch). */
export class ThreadedExactWriter implements ExactWriter {
  private worker: Worker | null = null;
  private queued = 0;
  private room: Array<() => void> = [];
  private readonly answers = new Map<number, (reply: Extract<ExactReply, { kind: "answer" }>) => void>();
  private nextId = 1;
  /** Why the thread stopped, if it did: everything it held is behind, so every file it wrote counts as failed. */
  private stopped: { error: Error; files: Set<string> } | null = null;
  private readonly written = new Set<string>();

  private thread(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(WORKER.file, {
      execArgv: WORKER.execArgv,
      resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB },
    });
    worker.on("message", (reply: ExactReply) => {
      if (reply.kind === "applied") {
        this.queued--;
        this.room.shift()?.();
      } else {
        const answer = this.answers.get(reply.id);
        this.answers.delete(reply.id);
        answer?.(reply);
      }
      this.holdOpen();
    });
    const fail = (error: Error) => {
      if (this.worker !== worker) return;
      this.worker = null;
      this.stopped = { error, files: new Set(this.written) };
      this.queued = 0;
      for (const wake of this.room.splice(0)) wake();
      for (const answer of this.answers.values()) answer({ kind: "answer", id: 0 });
      this.answers.clear();
    };
    worker.on("error", fail);
    worker.on("exit", (code) => fail(new Error(`The exact-words writer stopped (exit code ${code})`)));
    worker.unref();
    this.worker = worker;
    return worker;
  }

  /** The thread keeps the process alive only while it holds work or owes an answer (an idle one must not). */
  private holdOpen(): void {
    if (!this.worker) return;
    if (this.queued > 0 || this.answers.size > 0) this.worker.ref();
    else this.worker.unref();
  }

  async apply(file: string, batch: ExactBatch): Promise<void> {
    while (this.queued >= EXACT_QUEUE_BATCHES) await new Promise<void>((wake) => this.room.push(wake));
    this.queued++;
    this.written.add(file);
    this.thread().postMessage({ kind: "apply", file, batch } satisfies ExactRequest);
    this.holdOpen();
  }

  async settle(files?: string[]): Promise<Map<string, Error>> {
    const failures = new Map<string, Error>();
    if (this.worker) {
      const reply = await this.ask((id) => ({ kind: "settle", id, files }));
      for (const [file, wire] of reply.failures ?? []) failures.set(file, fromWire(wire));
    }
    if (this.stopped) {
      for (const file of this.stopped.files) if (!files || files.includes(file)) failures.set(file, this.stopped.error);
    }
    return failures;
  }

  async reset(file: string): Promise<void> {
    this.stopped?.files.delete(file);
    this.written.delete(file);
    if (this.worker) await this.ask((id) => ({ kind: "reset", id, file }));
  }

  async close(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    await this.ask((id) => ({ kind: "close", id }));
    this.worker = null;
    await worker.terminate();
  }

  private ask(request: (id: number) => ExactRequest): Promise<Extract<ExactReply, { kind: "answer" }>> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.answers.set(id, resolve);
      this.thread().postMessage(request(id));
      this.holdOpen();
    });
  }
}

/** For the thread: a failure as it can cross. */
export function failuresToWire(failures: Map<string, Error>): Array<[string, WireError]> {
  return [...failures].map(([file, error]) => [file, toWire(error)]);
}
