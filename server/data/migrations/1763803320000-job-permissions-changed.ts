import type { MigrationInterface, QueryRunner } from "typeorm";

/** files_permissions_changed: unchanged files whose file-server permissions a run re-read and updated (issue 33). Jobs recorded before: 0. */
export class JobPermissionsChanged1763803320000 implements MigrationInterface {
  name = "JobPermissionsChanged1763803320000";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE ingest_jobs ADD COLUMN files_permissions_changed integer NOT NULL DEFAULT 0`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE ingest_jobs DROP COLUMN files_permissions_changed`);
  }
}
