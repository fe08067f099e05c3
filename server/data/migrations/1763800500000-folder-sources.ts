import type { MigrationInterface, QueryRunner } from "typeorm";

/**
 * The folder source kind, and no more CHECK on data_sources.kind: the registry of kinds
 * (connectors/registry.ts) decides what a kind is, so the next kind needs no change here.
 * SQLite cannot drop a CHECK, so data_sources is rebuilt; that needs foreign keys off (else
 * dropping the old table would cascade into pipelines and the kinds' tables), and SQLite
 * ignores that switch inside a transaction, so this migration runs its own.
 */
export class FolderSources1763800500000 implements MigrationInterface {
  name = "FolderSources1763800500000";
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await q.query(`PRAGMA foreign_keys = OFF`);
    try {
      await q.startTransaction();
      try {
        await q.query(`CREATE TABLE data_sources_rebuilt (
          id varchar PRIMARY KEY NOT NULL,
          name varchar NOT NULL,
          kind varchar NOT NULL,
          owner_group_id varchar NOT NULL REFERENCES user_groups(id),
          auto_collection_id varchar REFERENCES collections(id) ON DELETE SET NULL,
          created_at datetime NOT NULL
        )`);
        await q.query(`INSERT INTO data_sources_rebuilt (id, name, kind, owner_group_id, auto_collection_id, created_at)
          SELECT id, name, kind, owner_group_id, auto_collection_id, created_at FROM data_sources`);
        await q.query(`DROP TABLE data_sources`);
        await q.query(`ALTER TABLE data_sources_rebuilt RENAME TO data_sources`);
        await q.query(`CREATE INDEX data_sources_owner ON data_sources (owner_group_id)`);
        await q.query(`CREATE TABLE folder_sources (
          data_source_id varchar PRIMARY KEY NOT NULL REFERENCES data_sources(id) ON DELETE CASCADE,
          path varchar NOT NULL
        )`);
        const broken = (await q.query(`PRAGMA foreign_key_check`)) as unknown[];
        if (broken.length) throw new Error(`Rebuilding data_sources left ${broken.length} broken foreign key(s)`);
        await q.commitTransaction();
      } catch (error) {
        await q.rollbackTransaction();
        throw error;
      }
    } finally {
      await q.query(`PRAGMA foreign_keys = ON`);
    }
  }

  /** Drops the folder kind's table; the kind CHECK is not put back (the registry decides kinds). */
  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE folder_sources`);
  }
}
