import type { MigrationInterface, QueryRunner } from "typeorm";

/** ingest_jobs.stats: where a job's time went (seconds per stage, counts per file type), as JSON; null for older jobs. */
export class JobStats1763800610000 implements MigrationInterface {
  name = "JobStats1763800610000";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE ingest_jobs ADD COLUMN stats text NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE ingest_jobs DROP COLUMN stats`);
  }
}
