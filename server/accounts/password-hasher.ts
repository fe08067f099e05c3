import { Worker } from "node:worker_threads";
import { ServiceUnavailableError } from "../errors";
import { workerScript } from "../worker-script";
import type { HashJob, HashReply, HashRequest } from "./password-hash.worker";
import type { PasswordCheck } from "./passwords";

/** About what one bcrypt job at cost 12 takes on one core here: the basis of Retry-After. */
const SECONDS_PER_JOB = 0.3;

/** Runs one job at a time; a hashing thread, or in unit tests a held stand-in. */
export type Runner<J, R> = (job: J) => Promise<R>;

/**
 * A fixed set of runners and a bounded line of waiting jobs: a job past `queueLimit` waiting
 * is refused at once with 503 and Retry-After, so a flood of sign-ins costs the server a full
 * queue, never an unbounded one (docs/decisions/0383-password-hashing-threads.md).
 */
export class BoundedWorkQueue<J, R> {
  private readonly idle: Array<Runner<J, R>>;
  private readonly waiting: Array<{ job: J; resolve: (r: R) => void; reject: (e: unknown) => void }> = [];

  constructor(
    private readonly runners: Array<Runner<J, R>>,
    private readonly queueLimit: number,
  ) {
    this.idle = [...runners];
  }

  run(job: J): Promise<R> {
    const runner = this.idle.pop();
    if (runner) return this.start(runner, job);
    if (this.waiting.length >= this.queueLimit) {
      const seconds = Math.max(1, Math.ceil(((this.waiting.length + this.runners.length) * SECONDS_PER_JOB) / this.runners.length));
      return Promise.reject(new ServiceUnavailableError(`Too many sign-ins at once; try again in ${seconds} seconds`, seconds));
    }
    return new Promise<R>((resolve, reject) => this.waiting.push({ job, resolve, reject }));
  }

  /** Jobs waiting for a runner now. */
  get queued(): number {
    return this.waiting.length;
  }

  private async start(runner: Runner<J, R>, job: J): Promise<R> {
    try {
      return await runner(job);
    } finally {
      const next = this.waiting.shift();
      if (next) this.start(runner, next.job).then(next.resolve, next.reject);
      else this.idle.push(runner);
    }
  }
}

/** One hashing thread, restarted if it dies. */
class HashThread {
  private worker: Worker | null = null;
  private pending: { id: number; resolve: (reply: HashReply) => void; reject: (e: Error) => void } | null = null;
  private nextId = 1;

  constructor(private readonly holdFile: string | null) {}

  run = (job: HashRequest): Promise<HashReply> => {
    const worker = this.ensure();
    const id = this.nextId++;
    // Referenced while a job runs (its caller waits for it), not while idle.
    worker.ref();
    return new Promise<HashReply>((resolve, reject) => {
      this.pending = { id, resolve, reject };
      worker.postMessage({ ...job, id } as HashJob);
    }).finally(() => worker.unref());
  };

  close(): Promise<number> | undefined {
    const worker = this.worker;
    this.worker = null;
    return worker?.terminate();
  }

  private ensure(): Worker {
    if (this.worker) return this.worker;
    const { file, execArgv } = workerScript(__filename, "password-hash.worker");
    const worker = new Worker(file, { execArgv, workerData: { holdFile: this.holdFile } });
    worker.on("message", (reply: HashReply) => {
      if (this.pending?.id !== reply.id) return;
      const { resolve } = this.pending;
      this.pending = null;
      resolve(reply);
    });
    const fail = (error: Error) => {
      if (this.worker === worker) this.worker = null;
      const pending = this.pending;
      this.pending = null;
      pending?.reject(error);
    };
    worker.on("error", fail);
    worker.on("exit", (code) => fail(new Error(`the password hashing thread stopped (exit code ${code})`)));
    // After the listeners (adding a message listener refs the thread again): an idle hashing thread must not keep a process (a test, a CLI) alive.
    worker.unref();
    this.worker = worker;
    return worker;
  }
}

export interface PasswordHasherOptions {
  threads: number;
  queueLimit: number;
  /** Tests only: SLUICE_TEST_HOLD_HASHING_FILE. */
  holdFile?: string | null;
}

/** Hashes and checks passwords on worker threads, never on the API's thread. */
export class PasswordHasher {
  private readonly threads: HashThread[];
  private readonly queue: BoundedWorkQueue<HashRequest, HashReply>;

  constructor({ threads, queueLimit, holdFile = null }: PasswordHasherOptions) {
    this.threads = Array.from({ length: threads }, () => new HashThread(holdFile));
    this.queue = new BoundedWorkQueue(
      this.threads.map((thread) => thread.run),
      queueLimit,
    );
  }

  async hash(password: string): Promise<string> {
    const reply = await this.queue.run({ kind: "hash", password });
    if (reply.error || !reply.hash) throw new Error(`password hashing failed: ${reply.error ?? "no hash"}`);
    return reply.hash;
  }

  async check(password: string, stored: string): Promise<PasswordCheck> {
    const reply = await this.queue.run({ kind: "check", password, stored });
    if (reply.error || !reply.check) throw new Error(`password check failed: ${reply.error ?? "no answer"}`);
    return reply.check;
  }

  async close(): Promise<void> {
    await Promise.all(this.threads.map((thread) => thread.close()));
  }
}
