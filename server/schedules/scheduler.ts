import type { DataSource } from "typeorm";
import { IsNull, LessThanOrEqual } from "typeorm";
import { ConflictError, HttpError } from "../errors";
import { PipelineSchedule } from "../data/entities/pipeline-schedule.entity";
import type { IngestQueue } from "../ingest/job-queue";
import type { Logger } from "../logger";
import type { Clock } from "./clock";
import { nextRunAfter } from "./schedule-timing";
import { ruleOf } from "./schedules.service";

export interface SchedulerOptions {
  clock: Clock;
  /** How often to look for due schedules (SLUICE_SCHEDULER_TICK_MS). */
  tickMs: number;
}

/** What one tick did, for tests and the log. */
export interface TickResult {
  started: string[];
  skipped: string[];
}

/**
 * Starts the due runs of pipeline schedules. Every process runs one (API processes and team
 * workers alike); each due run is claimed in the database by moving next_run_at with a
 * compare-and-set, so exactly one process starts it, and schedules are rows, so a restart
 * loses nothing. A schedule found overdue (the machine slept, the app was closed) is claimed
 * once and moved to its next future slot: one catch-up run, not one per missed slot.
 */
export class Scheduler {
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<unknown> | null = null;

  constructor(
    private readonly db: DataSource,
    private readonly queue: IngestQueue,
    private readonly logger: Logger,
    private readonly options: SchedulerOptions,
  ) {}

  /** Ticks now (the catch-up of whatever came due while nothing ran), then every tickMs. */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.tickInBackground(), this.options.tickMs);
    this.timer.unref();
    this.tickInBackground();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.ticking;
  }

  /** Starts every run due at the clock's now; a due run whose pipeline's job is still queued or running is skipped and counted. */
  async tick(): Promise<TickResult> {
    const now = this.options.clock();
    const due = await this.db.manager.find(PipelineSchedule, { where: { paused: false, nextRunAt: LessThanOrEqual(now) }, order: { nextRunAt: "ASC" } });
    const result: TickResult = { started: [], skipped: [] };
    for (const schedule of due) {
      const next = nextRunAfter(ruleOf(schedule), now);
      if (!(await this.claim(schedule, next))) continue;
      try {
        const job = await this.queue.enqueue(schedule.pipelineId, "schedule");
        result.started.push(schedule.pipelineId);
        this.logger.info(`scheduled run of pipeline ${schedule.pipelineId} started: job ${job.id}`);
      } catch (error) {
        if (error instanceof ConflictError) {
          await this.db.manager.increment(PipelineSchedule, { pipelineId: schedule.pipelineId }, "skippedRuns", 1);
          result.skipped.push(schedule.pipelineId);
          this.logger.info(`scheduled run of pipeline ${schedule.pipelineId} skipped: its previous job is still queued or running`);
        } else if (error instanceof HttpError) {
          // Recorded as a failed job already (the team queue unreachable): that run is over.
          this.logger.warn(`scheduled run of pipeline ${schedule.pipelineId} could not start: ${error.detail}`);
        } else {
          // Nothing was recorded (the database was busy, e.g. SQLite shared by several processes):
          // give the claim back, so the next tick of any process starts the run.
          await this.unclaim(schedule, next).catch(() => undefined);
          this.logger.warn(`scheduled run of pipeline ${schedule.pipelineId} could not start, trying again: ${(error as Error).message}`);
        }
      }
    }
    return result;
  }

  /**
   * Moves next_run_at on from the value this process read; only one process's update can
   * match it, and that process starts the run. Counting from now makes an interval run
   * every N minutes from each due run's start.
   */
  private async claim(schedule: PipelineSchedule, next: Date | null): Promise<boolean> {
    const result = await this.db.manager.update(
      PipelineSchedule,
      { pipelineId: schedule.pipelineId, paused: false, nextRunAt: schedule.nextRunAt! },
      { nextRunAt: next },
    );
    return result.affected === 1;
  }

  /** Puts next_run_at back to the slot claimed, unless the schedule changed since. */
  private async unclaim(schedule: PipelineSchedule, next: Date | null): Promise<void> {
    await this.db.manager.update(PipelineSchedule, { pipelineId: schedule.pipelineId, nextRunAt: next ?? IsNull() }, { nextRunAt: schedule.nextRunAt });
  }

  private tickInBackground(): void {
    // A slow tick (a busy database) is not overlapped by the next one.
    if (this.ticking) return;
    this.ticking = this.tick()
      .catch((error: Error) => this.logger.warn(`schedule check failed: ${error.message}`))
      .finally(() => {
        this.ticking = null;
      });
  }
}
