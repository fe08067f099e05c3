import type { MigrationInterface, QueryRunner } from "typeorm";

/** The PostgreSQL twin of ../1763800900000-job-skipped-files.ts. Issue 21: each job names the files it skipped and why (bounded like its errors), and who asked to cancel it. */
export class JobSkippedFiles1763800900000 implements MigrationInterface {
  name = "JobSkippedFiles1763800900000";

  async up(q: QueryRunner): Promise<void> {
    // Jobs recorded before this did not keep the names: an empty list.
    await q.query(`ALTER TABLE ingest_jobs ADD COLUMN skipped text NOT NULL DEFAULT '[]'`);
    await q.query(`ALTER TABLE ingest_jobs ADD COLUMN cancel_requested_by varchar`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE ingest_jobs DROP COLUMN skipped`);
    await q.query(`ALTER TABLE ingest_jobs DROP COLUMN cancel_requested_by`);
  }
}
