import type { MigrationInterface, QueryRunner } from "typeorm";

/** The PostgreSQL twin of ../1763803320000-job-permissions-changed.ts. */
export class JobPermissionsChanged1763803320000 implements MigrationInterface {
  name = "JobPermissionsChanged1763803320000";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE ingest_jobs ADD COLUMN files_permissions_changed integer NOT NULL DEFAULT 0`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE ingest_jobs DROP COLUMN files_permissions_changed`);
  }
}
