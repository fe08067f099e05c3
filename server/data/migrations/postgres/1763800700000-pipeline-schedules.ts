import type { MigrationInterface, QueryRunner } from "typeorm";

/** The PostgreSQL twin of ../1763800700000-pipeline-schedules.ts. */
export class PipelineSchedules1763800700000 implements MigrationInterface {
  name = "PipelineSchedules1763800700000";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE pipeline_schedules (
      pipeline_id varchar PRIMARY KEY NOT NULL REFERENCES pipelines(id) ON DELETE CASCADE,
      every_minutes integer,
      cron varchar,
      timezone varchar NOT NULL,
      paused boolean NOT NULL DEFAULT false,
      next_run_at timestamptz,
      skipped_runs integer NOT NULL DEFAULT 0,
      updated_at timestamptz NOT NULL,
      CHECK ((every_minutes IS NULL) <> (cron IS NULL))
    )`);
    await q.query(`CREATE INDEX pipeline_schedules_due ON pipeline_schedules (next_run_at)`);
    await q.query(`ALTER TABLE ingest_jobs
      ADD COLUMN files_added integer NOT NULL DEFAULT 0,
      ADD COLUMN files_changed integer NOT NULL DEFAULT 0,
      ADD COLUMN files_removed integer NOT NULL DEFAULT 0,
      ADD COLUMN files_unchanged integer NOT NULL DEFAULT 0,
      ADD COLUMN "trigger" varchar NOT NULL DEFAULT 'manual' CHECK ("trigger" IN ('manual', 'schedule'))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE pipeline_schedules`);
    await q.query(`ALTER TABLE ingest_jobs DROP COLUMN files_added, DROP COLUMN files_changed, DROP COLUMN files_removed, DROP COLUMN files_unchanged, DROP COLUMN "trigger"`);
  }
}
