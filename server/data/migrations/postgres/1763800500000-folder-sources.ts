import type { MigrationInterface, QueryRunner } from "typeorm";

/** The PostgreSQL twin of ../1763800500000-folder-sources.ts: the folder kind's table, and no more CHECK on data_sources.kind. */

export class FolderSources1763800500000 implements MigrationInterface {
  name = "FolderSources1763800500000";

  async up(q: QueryRunner): Promise<void> {
    // The name PostgreSQL gave the inline CHECK of 1763800100000.
    await q.query(`ALTER TABLE data_sources DROP CONSTRAINT IF EXISTS data_sources_kind_check`);
    await q.query(`CREATE TABLE folder_sources (
      data_source_id varchar PRIMARY KEY NOT NULL REFERENCES data_sources(id) ON DELETE CASCADE,
      path varchar NOT NULL
    )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE folder_sources`);
  }
}
