import { DelayedError, Queue, Worker, type Job } from "bullmq";
import type { Redis } from "ioredis";
import { Not, type DataSource, type EntityManager } from "typeorm";
import type { DatabaseOutage } from "../data/database-outage";
import { isDatabaseUnreachable } from "../data/db-errors";
import { ServiceUnavailableError } from "../errors";
import { IngestJob, type JobTrigger } from "../data/entities/ingest-job.entity";
import { Pipeline } from "../data/entities/pipeline.entity";
import type { Logger } from "../logger";
import { isConnectionError } from "../redis/redis-connection";
import { assertNoActiveJob, finishJob, INTERRUPTED, recordQueuedJob, runJob, type IngestQueue, type JobHandler, type JobTarget } from "./job-queue";

const QUEUE_NAME = "ingest";
/** How often every process looks for running jobs whose process is gone. */
const SWEEP_EVERY_MS = 3_000;
/** The worker's longest wait for a job (BZPOPMIN), kept under the connection's command timeout (REDIS_TIMEOUT_MS). */
const WORKER_BLOCK_SECONDS = 2;
/**
 * BullMQ's lock on a job a worker holds, renewed at half this while it runs, and how often the
 * workers look for jobs whose lock has lapsed. A job handed out to a process that died before it
 * marked the row running is handed out again within their sum (20 s): queued jobs of a dead
 * process run after a restart as on the desktop. A running one is recorded failed at once by the sweep.
 */
const LOCK_MS = 15_000;
const STALLED_CHECK_MS = 5_000;
/** How long a job waits before looking again when another job is writing into its collection. */
const COLLECTION_BUSY_RETRY_MS = 1_000;

/** Thrown inside the claiming transaction to undo its mark: another job is writing into the collection. */
class CollectionBusy extends Error {}

export interface BullmqQueueOptions {
  /** The process's connection (openRedis): the queue and the worker share it; BullMQ adds only the worker's blocking one. */
  redis: Redis;
  prefix: string;
  /** Take jobs in this process (API processes with SLUICE_WORKER=1, and `npm run worker`). */
  runWorker: boolean;
  /** How the running job rides out a database outage (DB_OUTAGE_GRACE_S). */
  outage: DatabaseOutage;
  /** Jobs running at once across every process (INGEST_CONCURRENCY), and in this one at most. */
  concurrency: number;
}

/**
 * The ingestion queue of team mode: rows first in the database as before (the API reads only
 * the database, and the 409 rule is still its transaction), plus a BullMQ job carrying the row's
 * id. BullMQ's global concurrency (INGEST_CONCURRENCY, default 1) bounds the jobs running at once
 * across every process; BullMQ's wait list keeps trigger order. Above 1, jobs of different
 * pipelines run side by side, except two into one collection: the later waits (a job's start
 * clears what a killed job left half-written in its collection, which would be the other's work).
 * The same pipeline never has two jobs (recordQueuedJob's 409). The process running a job names itself in Redis (an owner key holding the name
 * of its connection), so when that process dies, any other (or itself, restarted) marks the row
 * failed "Interrupted by shutdown", as the desktop's queue does at start-up, instead of running the
 * job again; BullMQ's stalled check then drops it. A process is dead once its connection is closed,
 * or silent for longer than BullMQ's lock (LOCK_MS), which it renews on that connection while it runs a job.
 */
export class BullmqJobQueue implements IngestQueue {
  private readonly redis: Redis;
  /** This process's connection name: what an owner key holds while it runs a job. */
  private readonly ownerId: string;
  private readonly queue: Queue;
  private worker: Worker | null = null;
  private readonly abort = new AbortController();
  private sweeper: NodeJS.Timeout | null = null;
  private stopped = false;
  /** The sweep in flight, if any. */
  private sweeping: Promise<void> | null = null;
  private readonly outage: DatabaseOutage;
  private readonly concurrency: number;

  constructor(
    private readonly db: DataSource,
    private readonly handler: JobHandler,
    private readonly logger: Logger,
    private readonly options: BullmqQueueOptions,
  ) {
    this.redis = options.redis;
    this.outage = options.outage;
    this.concurrency = options.concurrency;
    this.ownerId = String(options.redis.options.connectionName);
    this.queue = new Queue(QUEUE_NAME, { connection: options.redis, prefix: options.prefix });
    this.queue.on("error", (error) => this.logError("ingestion queue", error));
  }

  async start(): Promise<void> {
    // Waits for Redis as long as it takes (a process started before Redis comes up once it is).
    await this.queue.waitUntilReady();
    // The limit lives in Redis, one for the instance: set by the processes that take jobs, the last to start wins.
    if (this.options.runWorker) await this.setGlobalConcurrency();
    await this.sweep();
    // A row queued but missing in Redis (Redis lost its data, or a crash between the two writes)
    // is added again; adding an id BullMQ already holds does nothing.
    const queued = await this.db.manager.find(IngestJob, { where: { runState: "queued" }, order: { queueSeq: "ASC" } });
    for (const job of queued) await this.add(job.id);
    if (this.options.runWorker) {
      this.worker = new Worker(QUEUE_NAME, (job, token) => this.process(job, token), {
        connection: this.redis,
        prefix: this.options.prefix,
        concurrency: this.concurrency,
        lockDuration: LOCK_MS,
        stalledInterval: STALLED_CHECK_MS,
        drainDelay: WORKER_BLOCK_SECONDS,
      });
      this.worker.on("error", (error) => this.logError("ingestion worker", error));
    }
    // During a database outage the sweep has nothing to go on; the job's own log lines tell of the outage.
    this.sweeper = setInterval(
      () => void this.sweep().catch((error: Error) => isDatabaseUnreachable(error) || this.logger.warn(`ingestion sweep: ${error.message}`)),
      SWEEP_EVERY_MS,
    );
    this.sweeper.unref();
  }

  async enqueue(pipelineId: string, trigger: JobTrigger = "manual"): Promise<IngestJob> {
    const job = await recordQueuedJob(this.db, pipelineId, trigger);
    try {
      await this.add(job.id);
    } catch (error) {
      await finishJob(this.db, job.id, pipelineId, "failed", "The job queue (Redis) could not be reached");
      throw new ServiceUnavailableError(`The job queue (Redis) could not be reached: ${(error as Error).message}`);
    }
    return job;
  }

  /** The job rows are the truth in team mode too, so the guard reads the database like the in-process queue. */
  assertNoActiveJob(tx: EntityManager, target: JobTarget): Promise<void> {
    return assertNoActiveJob(tx, target);
  }

  /** Interrupts this process's running job (recorded failed), then closes the worker and the queue (not the shared connection). */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.sweeper) clearInterval(this.sweeper);
    this.abort.abort();
    await this.worker?.close();
    await this.queue.close();
  }

  /** Resolves once no job is queued or running anywhere (tests and benchmarks). */
  async idle(): Promise<void> {
    while (await this.db.manager.exists(IngestJob, { where: [{ runState: "queued" }, { runState: "running" }] })) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  private add(jobId: string): Promise<unknown> {
    return this.queue.add("ingest", { jobId }, { jobId, removeOnComplete: true, removeOnFail: true });
  }

  private async setGlobalConcurrency(): Promise<void> {
    const current = await this.queue.getGlobalConcurrency();
    if (current !== null && current !== this.concurrency) {
      this.logger.warn(`ingestion: INGEST_CONCURRENCY=${this.concurrency} here replaces ${current} set by another process; give every process that takes jobs the same value`);
    }
    await this.queue.setGlobalConcurrency(this.concurrency);
  }

  private async process(bullJob: Job<{ jobId: string }>, token?: string): Promise<void> {
    // Read once the database answers: a job handed out during an outage must not be dropped by BullMQ as failed.
    const found = await this.outage.untilReachable(() => this.db.manager.findOne(IngestJob, { where: { id: bullJob.data.jobId } }), this.abort.signal);
    if (!found) throw new Error("stopped before the database could be reached");
    const job = found.value;
    if (!job || job.runState === "done") return;
    if (job.runState === "running") {
      // Handed out again after its process died (BullMQ's stalled check): record it, never re-run it.
      await this.sweep();
      return;
    }
    const ownerKey = this.ownerKey(job.id);
    // While it is set, no sweep takes the job for interrupted, however long a database outage keeps it from recording its end.
    await this.redis.set(ownerKey, this.ownerId);
    let claimed = false;
    try {
      claimed = await this.outage.run(() => this.claim(job), this.abort.signal);
    } catch (error) {
      // Rows first: a job that cannot start is recorded failed, not left queued with no BullMQ job behind it.
      const message = this.abort.signal.aborted ? INTERRUPTED : `The job could not start: ${(error as Error).message}`;
      await finishJob(this.db, job.id, job.pipelineId, "failed", message).catch(() => undefined);
      this.logger.warn(`ingestion job ${job.id} failed: ${message}`);
      return;
    } finally {
      if (!claimed) await this.redis.del(ownerKey).catch(() => undefined);
    }
    if (!claimed) {
      // BullMQ's documented way to put a job back from its processor: it leaves the slot, and comes back after the delay.
      await bullJob.moveToDelayed(Date.now() + COLLECTION_BUSY_RETRY_MS, token);
      throw new DelayedError();
    }
    try {
      await runJob(this.db, this.handler, this.logger, job, this.abort.signal, this.outage);
    } finally {
      await this.redis.del(ownerKey).catch(() => undefined);
    }
  }

  /**
   * Marks the job running, unless another job into the same collection is running (then false:
   * it waits). One transaction, whose lock (SQLite's writer, PostgreSQL's advisory lock) makes the
   * check and the mark one step across processes. It writes before it reads: on SQLite a
   * transaction that read first cannot take the write lock once another process has written.
   */
  private async claim(job: IngestJob): Promise<boolean> {
    try {
      await this.db.transaction(async (tx) => {
        // Only a job still waiting: one recorded as ended meanwhile keeps its record (runJob then does not run it).
        await tx.update(IngestJob, { id: job.id, runState: Not("done") }, { runState: "running", startedAt: new Date(), currentEntity: "Starting" });
        const pipeline = await tx.findOne(Pipeline, { where: { id: job.pipelineId } });
        // A pipeline deleted meanwhile: the handler records why the job fails.
        if (!pipeline) return;
        const busy = await tx
          .createQueryBuilder(IngestJob, "j")
          .innerJoin(Pipeline, "p", "p.id = j.pipeline_id")
          .where("j.run_state = 'running'")
          .andWhere("p.collection_id = :collection", { collection: pipeline.collectionId })
          .andWhere("j.id <> :id", { id: job.id })
          .getExists();
        if (busy) throw new CollectionBusy();
      });
      return true;
    } catch (error) {
      if (error instanceof CollectionBusy) return false;
      throw error;
    }
  }

  /**
   * Marks failed every running job whose process no longer holds a live connection to Redis. One
   * sweep at a time: a sweep that waits (its write queued behind a lock a dead process held until
   * PostgreSQL ended that session) must not be joined by one more every interval, each holding a
   * pooled connection the API's requests need.
   */
  private sweep(): Promise<void> {
    this.sweeping ??= this.sweepOnce().finally(() => {
      this.sweeping = null;
    });
    return this.sweeping;
  }

  private async sweepOnce(): Promise<void> {
    if (this.stopped) return;
    const running = await this.db.manager.find(IngestJob, { where: { runState: "running" } });
    if (running.length === 0) return;
    const live = await this.liveConnections();
    for (const job of running) {
      const owner = await this.redis.get(this.ownerKey(job.id));
      if (owner && live.has(owner)) continue;
      // Re-read: the job may have ended between the two reads.
      const current = await this.db.manager.findOne(IngestJob, { where: { id: job.id } });
      if (current?.runState !== "running") continue;
      await finishJob(this.db, job.id, job.pipelineId, "failed", INTERRUPTED);
      await this.redis.del(this.ownerKey(job.id));
      // Its process is gone: free BullMQ's lock so the stalled check releases the global slot now.
      await this.redis.del(`${this.options.prefix}:${QUEUE_NAME}:${job.id}:lock`);
      this.logger.warn(`ingestion job ${job.id} was interrupted (its process is gone) and is marked failed`);
    }
  }

  /**
   * The names of the connections Redis lists and has heard from within LOCK_MS. A process running
   * a job renews its BullMQ lock on its connection every LOCK_MS / 2, so a connection silent for
   * longer holds no lock: its process is gone without closing it (a machine that lost power, whose
   * connection Redis keeps until its TCP keepalive gives up, 300 s by default), or frozen.
   */
  private async liveConnections(): Promise<Set<string>> {
    const live = new Set<string>();
    for (const line of String(await this.redis.client("LIST")).split("\n")) {
      const name = /(?:^| )name=(\S*)/.exec(line)?.[1];
      const idleSeconds = Number(/(?:^| )idle=(\d+)/.exec(line)?.[1] ?? 0);
      if (name && idleSeconds * 1000 < LOCK_MS) live.add(name);
    }
    return live;
  }

  /** Connection errors reach here too (BullMQ forwards them); the connection's own log line has them already. */
  private logError(what: string, error: Error): void {
    if (!isConnectionError(error)) this.logger.warn(`${what} (Redis): ${error.message}`);
  }

  private ownerKey(jobId: string): string {
    return `${this.options.prefix}:ingest-owner:${jobId}`;
  }
}
