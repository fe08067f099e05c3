import type { DataSource, EntityManager } from "typeorm";
import { In } from "typeorm";
import { ConflictError } from "../errors";
import { Pipeline } from "../data/entities/pipeline.entity";
import { PipelineSchedule } from "../data/entities/pipeline-schedule.entity";
import { requireDataSourceAccess, requirePipelineAccess } from "../access/access";
import type { Actor } from "../access/actor";
import { withDetails, type PipelineView } from "../pipelines/pipeline-details";
import type { Clock } from "./clock";
import { assertCronPattern, assertTimeZone, nextRunAfter, serverTimeZone, type ScheduleRule } from "./schedule-timing";

/** PUT /data_pipelines/{id}/schedule: a new rule (with or without `paused`), or `paused` alone on the schedule there is. */
export type ScheduleChange = RuleChange | { paused: boolean };
export type RuleChange = ({ everyMinutes: number } | { cron: string }) & { timezone?: string; paused?: boolean };

const NO_SCHEDULE = "This pipeline has no schedule to pause or resume; set one first";

export function ruleOf(schedule: PipelineSchedule): ScheduleRule {
  return schedule.cron !== null ? { cron: schedule.cron, timezone: schedule.timezone } : { everyMinutes: schedule.everyMinutes! };
}

/** Setting, pausing and removing schedules; the Scheduler (scheduler.ts) starts their runs. */
export class SchedulesService {
  constructor(
    private readonly db: DataSource,
    private readonly clock: Clock,
  ) {}

  /** Sets or replaces the schedule, or pauses/resumes it; never starts a run itself. Returns the pipeline record. */
  async set(actor: Actor, pipelineId: string, change: ScheduleChange): Promise<PipelineView> {
    const pipeline = await this.db.transaction(async (tx) => {
      const pipeline = await requirePipelineAccess(tx, actor, pipelineId);
      const now = this.clock();
      if (!("everyMinutes" in change) && !("cron" in change)) await this.setPaused(tx, pipelineId, change.paused, now);
      else await tx.save(PipelineSchedule, this.newSchedule(pipelineId, change, now));
      return pipeline;
    });
    return (await withDetails(this.db.manager, [pipeline]))[0];
  }

  /** Removes the schedule (none there is no error: the pipeline ends up unscheduled either way). */
  async remove(actor: Actor, pipelineId: string): Promise<PipelineView> {
    const pipeline = await this.db.transaction(async (tx) => {
      const pipeline = await requirePipelineAccess(tx, actor, pipelineId);
      await tx.delete(PipelineSchedule, { pipelineId });
      return pipeline;
    });
    return (await withDetails(this.db.manager, [pipeline]))[0];
  }

  /**
   * Pauses (or resumes) the schedule of every pipeline reading from the source, e.g. while its
   * server is down for maintenance. Returns how many schedules changed.
   */
  async setPausedForSource(actor: Actor, dataSourceId: string, paused: boolean): Promise<number> {
    return this.db.transaction(async (tx) => {
      await requireDataSourceAccess(tx, actor, dataSourceId);
      const pipelines = await tx.find(Pipeline, { where: { dataSourceId }, select: { id: true } });
      if (pipelines.length === 0) return 0;
      const schedules = await tx.find(PipelineSchedule, { where: { pipelineId: In(pipelines.map((p) => p.id)), paused: !paused } });
      const now = this.clock();
      for (const schedule of schedules) await this.setPaused(tx, schedule.pipelineId, paused, now);
      return schedules.length;
    });
  }

  private newSchedule(pipelineId: string, change: RuleChange, now: Date): PipelineSchedule {
    const timezone = change.timezone ?? serverTimeZone();
    assertTimeZone(timezone);
    if ("cron" in change) assertCronPattern(change.cron, timezone);
    const rule: ScheduleRule = "cron" in change ? { cron: change.cron.trim(), timezone } : { everyMinutes: change.everyMinutes };
    const paused = change.paused ?? false;
    return Object.assign(new PipelineSchedule(), {
      pipelineId,
      everyMinutes: "everyMinutes" in rule ? rule.everyMinutes : null,
      cron: "cron" in rule ? rule.cron : null,
      timezone,
      paused,
      // An interval counts from this moment; a replaced schedule starts afresh.
      nextRunAt: paused ? null : nextRunAfter(rule, now),
      skippedRuns: 0,
      updatedAt: now,
    });
  }

  /** Paused: no next run. Resumed: the next run after now (an interval counts from the resume). */
  private async setPaused(tx: EntityManager, pipelineId: string, paused: boolean, now: Date): Promise<void> {
    const schedule = await tx.findOne(PipelineSchedule, { where: { pipelineId } });
    if (!schedule) throw new ConflictError(NO_SCHEDULE);
    if (schedule.paused === paused) return;
    const nextRunAt = paused ? null : nextRunAfter(ruleOf(schedule), now);
    await tx.update(PipelineSchedule, { pipelineId }, { paused, nextRunAt, updatedAt: now });
  }
}
