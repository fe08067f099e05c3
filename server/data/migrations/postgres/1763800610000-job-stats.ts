import type { MigrationInterface, QueryRunner } from "typeorm";

/** The PostgreSQL twin of ../1763800610000-job-stats.ts. */
export class JobStats1763800610000 implements MigrationInterface {
  name = "JobStats1763800610000";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE ingest_jobs ADD COLUMN stats text NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE ingest_jobs DROP COLUMN stats`);
  }
}
