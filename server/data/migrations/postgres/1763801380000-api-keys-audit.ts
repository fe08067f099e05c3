import type { MigrationInterface, QueryRunner } from "typeorm";

/** The PostgreSQL twin of ../1763801380000-api-keys-audit.ts. */
export class ApiKeysAudit1763801380000 implements MigrationInterface {
  name = "ApiKeysAudit1763801380000";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE users ADD COLUMN session_generation integer NOT NULL DEFAULT 0`);
    await q.query(`CREATE TABLE api_keys (
      id varchar PRIMARY KEY NOT NULL,
      user_id varchar NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      name varchar NOT NULL,
      key_hash varchar NOT NULL UNIQUE,
      created_at timestamptz NOT NULL,
      last_used_at timestamptz
    )`);
    await q.query(`CREATE INDEX api_keys_by_user ON api_keys (user_id, created_at)`);
    await q.query(`CREATE TABLE audit_events (
      id varchar PRIMARY KEY NOT NULL,
      at timestamptz NOT NULL,
      action varchar NOT NULL,
      actor_id varchar,
      actor_email varchar,
      address varchar,
      object_id varchar,
      detail text
    )`);
    await q.query(`CREATE INDEX audit_events_by_time ON audit_events (at, id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE audit_events`);
    await q.query(`DROP TABLE api_keys`);
    await q.query(`ALTER TABLE users DROP COLUMN session_generation`);
  }
}
