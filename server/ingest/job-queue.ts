import crypto from "node:crypto";
import { Not, type DataSource, type EntityManager } from "typeorm";
import { ConflictError } from "../errors";
import { IngestJob, type JobTrigger } from "../data/entities/ingest-job.entity";
import { Pipeline } from "../data/entities/pipeline.entity";
import type { DatabaseOutage } from "../data/database-outage";
import type { Logger } from "../logger";
import { JobProgress } from "./job-progress";
import { independentWrite } from "../data/serial-transactions";
import { INTERRUPTED } from "./job-interrupted";

export { INTERRUPTED, JobInterrupted } from "./job-interrupted";

export const ALREADY_RUNNING = "Ingestion already in progress for this pipeline";
const NOTHING_TO_CANCEL = "No ingestion job is queued or running for this pipeline";
/** How often a running job looks at its row for a cancel request. */
const CANCEL_POLL_MS = 250;

function cancelledBy(email: string): string {
  return `Cancelled by ${email}`;
}

/**
 * Cancels the pipeline's queued or running job. A queued one ends `failed` now; a running one gets
 * the request on its row and ends `failed` at its next file (runJob watches the row), keeping what
 * it indexed so far. The row is the signal in both queue kinds: the request may reach another API
 * process than the one running the job. 409 when nothing is queued or running.
 */
export async function requestCancel(db: DataSource, pipelineId: string, email: string): Promise<IngestJob> {
  return db.transaction(async (tx) => {
    const job = await tx.findOne(IngestJob, { where: [{ pipelineId, runState: "queued" }, { pipelineId, runState: "running" }] });
    if (!job) throw new ConflictError(NOTHING_TO_CANCEL);
    if (job.runState === "queued") {
      await finishJobIn(tx, job.id, pipelineId, "failed", cancelledBy(email));
    } else if (job.cancelRequestedBy === null) {
      await tx.update(IngestJob, { id: job.id }, { cancelRequestedBy: email });
    }
    return tx.findOneOrFail(IngestJob, { where: { id: job.id } });
  }).then((job) => {
    // Run here: stop it now. Run elsewhere: its process sees the row at its next poll.
    if (job.runState === "running") localRuns.get(job.id)?.(email);
    return job;
  });
}

/** The jobs this process runs, by id: a cancel taken here stops its job at once, without waiting for the poll. */
const localRuns = new Map<string, (email: string) => void>();

interface CancelWatch {
  stop(): void;
  /** Who cancelled, once the job was cancelled. */
  by(): string | null;
  cancel(email: string): void;
}

/** Aborts `cancel` once the job's row carries a cancel request (any process may have taken it); stop() ends the watch. */
function watchForCancel(db: DataSource, jobId: string, controller: AbortController): CancelWatch {
  let by: string | null = null;
  const cancel = (email: string) => {
    if (controller.signal.aborted) return;
    by = email;
    controller.abort();
  };
  const timer = setInterval(() => {
    db.manager
      .findOne(IngestJob, { where: { id: jobId }, select: { id: true, cancelRequestedBy: true } })
      .then((row) => {
        if (row?.cancelRequestedBy) cancel(row.cancelRequestedBy);
      })
      // A missed look (a database outage) is taken again at the next tick.
      .catch(() => undefined);
  }, CANCEL_POLL_MS);
  timer.unref();
  localRuns.set(jobId, cancel);
  return {
    stop: () => {
      clearInterval(timer);
      localRuns.delete(jobId);
    },
    by: () => by,
    cancel,
  };
}

/** Runs one job; resolves when all entities are handled, throws when the job fails. */
export type JobHandler = (job: IngestJob, progress: JobProgress, signal: AbortSignal) => Promise<void>;


/** What a queued or running job writes to: its pipeline's source and collection. */
export type JobTarget = { dataSourceId: string } | { collectionId: string };

/** What the API needs from the ingestion queue: the in-process JobQueue or the BullMQ one (team mode). */
export interface IngestQueue {
  start(): Promise<void>;
  /** Records a queued job (the 409 rule included) and hands it to the queue; `trigger` says what started it. */
  enqueue(pipelineId: string, trigger?: JobTrigger): Promise<IngestJob>;
  /** 409 while a job that writes to the target is queued or running; call it in the deleting transaction. */
  assertNoActiveJob(tx: EntityManager, target: JobTarget): Promise<void>;
  stop(): Promise<void>;
  idle(): Promise<void>;
}

/**
 * The durable serial queue on SQLite: one job at a time across the whole instance, in
 * trigger order. Jobs are rows first (queued → running → done), so a crash leaves a true
 * record; at start-up a job found running is marked failed, queued ones still run.
 */
export class JobQueue implements IngestQueue {
  private running: Promise<void> | null = null;
  private abort = new AbortController();
  private stopped = false;

  constructor(
    private readonly db: DataSource,
    private readonly handler: JobHandler,
    private readonly logger: Logger,
    /** How the running job rides out a database outage (DB_OUTAGE_GRACE_S). */
    private readonly outage: DatabaseOutage,
  ) {}

  /** Marks jobs interrupted by a crash as failed, then starts on whatever is queued. */
  async start(): Promise<void> {
    const interrupted = await this.db.manager.find(IngestJob, { where: { runState: "running" } });
    for (const job of interrupted) {
      await this.finish(job.id, job.pipelineId, "failed", INTERRUPTED);
      this.logger.warn(`ingestion job ${job.id} was interrupted by a shutdown and is marked failed`);
    }
    this.pump();
  }

  /** Records a queued job (status processing) unless the pipeline already has one queued or running. */
  async enqueue(pipelineId: string, trigger: JobTrigger = "manual"): Promise<IngestJob> {
    const job = await recordQueuedJob(this.db, pipelineId, trigger);
    this.pump();
    return job;
  }

  assertNoActiveJob(tx: EntityManager, target: JobTarget): Promise<void> {
    return assertNoActiveJob(tx, target);
  }

  /** Interrupts the running job (it is recorded failed) and waits for it, so shutdown leaves a true record. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    await this.running;
  }

  /** Resolves once no job is queued or running (tests and benchmarks). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private pump(): void {
    if (this.running || this.stopped) return;
    this.running = this.drain()
      .catch((error: Error) => this.logger.error(`ingestion queue stopped taking jobs: ${error.message}`))
      .finally(() => {
        this.running = null;
      });
  }

  private async drain(): Promise<void> {
    while (!this.stopped) {
      // The next job is looked for once the database answers again (an outage between two jobs).
      const next = await this.outage.untilReachable(
        () => this.db.manager.findOne(IngestJob, { where: { runState: "queued" }, order: { queueSeq: "ASC" } }),
        this.abort.signal,
      );
      if (!next?.value) return;
      await this.run(next.value);
    }
  }

  private run(job: IngestJob): Promise<void> {
    return runJob(this.db, this.handler, this.logger, job, this.abort.signal, this.outage);
  }

  private finish(jobId: string, pipelineId: string, status: "completed" | "failed", errorMessage: string | null): Promise<void> {
    return finishJob(this.db, jobId, pipelineId, status, errorMessage);
  }
}

/** The 409 rule and the row, in one transaction: a queued job (status processing) unless the pipeline has one queued or running. */
export async function recordQueuedJob(db: DataSource, pipelineId: string, trigger: JobTrigger = "manual"): Promise<IngestJob> {
  return db.transaction(async (tx) => {
    const active = await tx.exists(IngestJob, { where: [{ pipelineId, runState: "queued" }, { pipelineId, runState: "running" }] });
    if (active) throw new ConflictError(ALREADY_RUNNING);
    const { max } = (await tx.createQueryBuilder(IngestJob, "j").select("MAX(j.queue_seq)", "max").getRawOne<{ max: number | null }>()) ?? {
      max: null,
    };
    const now = new Date();
    const record = tx.create(IngestJob, {
      id: crypto.randomUUID(),
      pipelineId,
      status: "processing",
      runState: "queued",
      queueSeq: (max ?? 0) + 1,
      entitiesDiscovered: 0,
      entitiesProcessed: 0,
      entitiesFailed: 0,
      entitiesSkipped: 0,
      bytesProcessed: 0,
      filesAdded: 0,
      filesChanged: 0,
      filesRemoved: 0,
      filesUnchanged: 0,
      filesPermissionsChanged: 0,
      trigger,
      discoveryComplete: false,
      currentEntity: "Waiting for other ingestion jobs to finish",
      errorMessage: null,
      errors: [],
      skipped: [],
      cancelRequestedBy: null,
      stats: null,
      createdAt: now,
      startedAt: now,
      completedAt: null,
    });
    await tx.insert(IngestJob, record);
    await tx.update(Pipeline, { id: pipelineId }, { status: "processing" });
    return record;
  });
}

/** Deleting what a queued or running job writes to would pull the ground from under it: 409 until it ends. */
export async function assertNoActiveJob(tx: EntityManager, target: JobTarget): Promise<void> {
  const active = await tx
    .createQueryBuilder(IngestJob, "j")
    .innerJoin(Pipeline, "p", "p.id = j.pipeline_id")
    .where("j.run_state IN ('queued', 'running')")
    .andWhere("dataSourceId" in target ? "p.data_source_id = :id" : "p.collection_id = :id", {
      id: "dataSourceId" in target ? target.dataSourceId : target.collectionId,
    })
    .getExists();
  if (active) throw new ConflictError("An ingestion job is queued or running here; delete once it has finished");
}

/**
 * Marks the job running, runs the handler with live progress, and records how it ended (rows
 * first). Its writes ride out a database outage of up to the grace (DatabaseOutage); how the job
 * ended is recorded once the database answers, however long that takes, so the row never claims
 * a job that stopped, nor gets mislabelled by a sweep while this process still holds the job.
 */
export async function runJob(db: DataSource, handler: JobHandler, logger: Logger, job: IngestJob, signal: AbortSignal, outage: DatabaseOutage): Promise<void> {
  const progress = new JobProgress(db, job.id, outage);
  // The handler stops on a shutdown (signal) or a cancel request on the row (watchForCancel).
  const cancel = new AbortController();
  const cancelWatch = watchForCancel(db, job.id, cancel);
  const workSignal = AbortSignal.any([signal, cancel.signal]);
  try {
    job.runState = "running";
    job.startedAt = new Date();
    // queued -> running: both count as active for every check, so this need not wait for the writer lock.
    // Never over a recorded end: a team-server process frozen between its claim and this write
    // wakes up after a sweep recorded the job interrupted, and must not make it "running" again.
    const marked = await outage.run(
      () => independentWrite(db, (tx) => tx.update(IngestJob, { id: job.id, runState: Not("done") }, { runState: "running", startedAt: job.startedAt, currentEntity: "Starting" })),
      signal,
    );
    if (marked.affected === 0) {
      cancelWatch.stop();
      logger.warn(`ingestion job ${job.id} was recorded as ended before it could start here; it is not run`);
      return;
    }
    await handler(job, progress, workSignal);
    cancelWatch.stop();
    progress.currentEntity = "Done";
    const recorded = await outage.untilReachable(async () => {
      await progress.flush();
      await finishJob(db, job.id, job.pipelineId, "completed", null);
    }, signal);
    if (!recorded) logger.warn(`ingestion job ${job.id} completed while the database was unreachable and the process stopping; it is recorded at the next start`);
  } catch (error) {
    cancelWatch.stop();
    const cancelledByUser = cancelWatch.by();
    const message = signal.aborted ? INTERRUPTED : cancelledByUser ? cancelledBy(cancelledByUser) : (error as Error)?.message || "Ingestion failed";
    // The counters are worth keeping (written once the database answers) but must not stand in the way of recording the end.
    await outage.untilReachable(() => progress.flush(), signal).catch(() => undefined);
    await recordFailure(db, logger, job, message, signal);
    logger.warn(`ingestion job ${job.id} failed: ${message}`);
  }
}

const RECORD_RETRY_MS = 5000;

/**
 * Records a failed job, retrying while the database cannot take the write (a full disk): the
 * queue waits meanwhile, and the job's row stays true. At shutdown it gives up; the next
 * start marks a job left running as failed.
 */
async function recordFailure(db: DataSource, logger: Logger, job: IngestJob, message: string, signal: AbortSignal): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await finishJob(db, job.id, job.pipelineId, "failed", message);
    } catch (error) {
      if (attempt === 0) logger.error(`ingestion job ${job.id} failed (${message}) and could not be recorded: ${(error as Error).message}; retrying`);
      if (signal.aborted) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, RECORD_RETRY_MS);
        signal.addEventListener(
          "abort",
          () => {
            clearTimeout(timer);
            resolve();
          },
          { once: true },
        );
      });
    }
  }
}

export async function finishJob(db: DataSource, jobId: string, pipelineId: string, status: "completed" | "failed", errorMessage: string | null): Promise<void> {
  await db.transaction((tx) => finishJobIn(tx, jobId, pipelineId, status, errorMessage));
}

/**
 * Records how a job ended, once: a job already done keeps its record. A team-server process
 * frozen past its lock (its job failed "Interrupted by shutdown" by a sweep) that wakes up and
 * finishes must not turn that record into "completed" after the fact.
 */
async function finishJobIn(tx: EntityManager, jobId: string, pipelineId: string, status: "completed" | "failed", errorMessage: string | null): Promise<void> {
  const ended = await tx.update(IngestJob, { id: jobId, runState: Not("done") }, { status, runState: "done", errorMessage, completedAt: new Date() });
  if (ended.affected === 0) return;
  await tx.update(Pipeline, { id: pipelineId }, { status: status === "completed" ? "active" : "failed" });
}
