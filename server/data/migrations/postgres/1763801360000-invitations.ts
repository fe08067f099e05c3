import type { MigrationInterface, QueryRunner } from "typeorm";

/** The PostgreSQL twin of ../1763801360000-invitations.ts. */
export class Invitations1763801360000 implements MigrationInterface {
  name = "Invitations1763801360000";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE invitations (
      id varchar PRIMARY KEY NOT NULL,
      email varchar NOT NULL,
      token_hash varchar NOT NULL UNIQUE,
      group_id varchar REFERENCES user_groups(id) ON DELETE CASCADE,
      invited_by varchar REFERENCES users(id) ON DELETE SET NULL,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      used_at timestamptz
    )`);
    await q.query(`CREATE INDEX invitations_by_email ON invitations (email)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE invitations`);
  }
}
