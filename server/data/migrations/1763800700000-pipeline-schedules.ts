import type { MigrationInterface, QueryRunner } from "typeorm";

/** Scheduled pipelines (issue 22): a schedule per pipeline, and what each job changed and what started it. */
export class PipelineSchedules1763800700000 implements MigrationInterface {
  name = "PipelineSchedules1763800700000";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE pipeline_schedules (
      pipeline_id varchar PRIMARY KEY NOT NULL REFERENCES pipelines(id) ON DELETE CASCADE,
      every_minutes integer,
      cron varchar,
      timezone varchar NOT NULL,
      paused boolean NOT NULL DEFAULT 0,
      next_run_at datetime,
      skipped_runs integer NOT NULL DEFAULT 0,
      updated_at datetime NOT NULL,
      CHECK ((every_minutes IS NULL) <> (cron IS NULL))
    )`);
    await q.query(`CREATE INDEX pipeline_schedules_due ON pipeline_schedules (next_run_at)`);
    // Jobs recorded before schedules existed were all started by hand; their change counts are unknown (0).
    for (const column of ["files_added", "files_changed", "files_removed", "files_unchanged"]) {
      await q.query(`ALTER TABLE ingest_jobs ADD COLUMN ${column} integer NOT NULL DEFAULT 0`);
    }
    await q.query(`ALTER TABLE ingest_jobs ADD COLUMN "trigger" varchar NOT NULL DEFAULT 'manual' CHECK ("trigger" IN ('manual', 'schedule'))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE pipeline_schedules`);
    for (const column of ["files_added", "files_changed", "files_removed", "files_unchanged", `"trigger"`]) {
      await q.query(`ALTER TABLE ingest_jobs DROP COLUMN ${column}`);
    }
  }
}
