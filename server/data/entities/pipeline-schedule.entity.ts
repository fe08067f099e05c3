import { Column, Entity, PrimaryColumn } from "typeorm";

/**
 * A pipeline's schedule, a setting beside its status: either every N minutes or a cron
 * pattern in a time zone. A row per scheduled pipeline, so a schedule survives restarts of
 * every process; next_run_at is what the schedulers claim (compare-and-set) to start a run once.
 */
@Entity({ name: "pipeline_schedules" })
export class PipelineSchedule {
  @PrimaryColumn({ type: "varchar", name: "pipeline_id" })
  pipelineId: string;

  /** Set for an interval schedule; null for a cron one. */
  @Column({ type: "integer", name: "every_minutes", nullable: true })
  everyMinutes: number | null;

  /** Set for a cron schedule (five fields); null for an interval one. */
  @Column({ type: "varchar", nullable: true })
  cron: string | null;

  /** An IANA name: where a cron pattern's hours are read. */
  @Column({ type: "varchar" })
  timezone: string;

  @Column({ type: "boolean" })
  paused: boolean;

  /** The next due run; null while paused. */
  @Column({ type: Date, name: "next_run_at", nullable: true })
  nextRunAt: Date | null;

  /** Due runs not started because the pipeline's job was still queued or running. */
  @Column({ type: "integer", name: "skipped_runs" })
  skippedRuns: number;

  @Column({ type: Date, name: "updated_at" })
  updatedAt: Date;
}
