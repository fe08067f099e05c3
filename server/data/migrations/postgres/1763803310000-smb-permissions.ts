import type { MigrationInterface, QueryRunner } from "typeorm";

/** The PostgreSQL twin of ../1763803310000-smb-permissions.ts. */
export class SmbPermissions1763803310000 implements MigrationInterface {
  name = "SmbPermissions1763803310000";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE smb_sources ADD COLUMN source_permissions boolean NOT NULL DEFAULT false`);
    await q.query(`CREATE TABLE smb_account_links (
      id varchar PRIMARY KEY NOT NULL,
      user_id varchar NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      data_source_id varchar REFERENCES data_sources(id) ON DELETE SET NULL,
      server varchar NOT NULL,
      account varchar NOT NULL,
      sid varchar NOT NULL,
      group_sids text NOT NULL,
      group_names text NOT NULL,
      checked_at timestamptz NOT NULL
    )`);
    await q.query(`CREATE UNIQUE INDEX smb_account_links_server_sid ON smb_account_links (server, sid)`);
    await q.query(`CREATE UNIQUE INDEX smb_account_links_user_server ON smb_account_links (user_id, server)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE smb_account_links`);
    await q.query(`ALTER TABLE smb_sources DROP COLUMN source_permissions`);
  }
}
