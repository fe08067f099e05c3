import type { MigrationInterface, QueryRunner } from "typeorm";

/** The PostgreSQL twin of ../1763800200000-drive.ts: same tables, names and constraints in PostgreSQL types. */

export class Drive1763800200000 implements MigrationInterface {
  name = "Drive1763800200000";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE drive_grants (
      user_id varchar PRIMARY KEY NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      provider_subject varchar NOT NULL,
      email varchar,
      scopes varchar NOT NULL,
      connected_at timestamptz NOT NULL
    )`);
    await q.query(`CREATE TABLE drive_sources (
      data_source_id varchar PRIMARY KEY NOT NULL REFERENCES data_sources(id) ON DELETE CASCADE,
      owner_user_id varchar NOT NULL REFERENCES users(id)
    )`);
    await q.query(`CREATE TABLE drive_files (
      id varchar PRIMARY KEY NOT NULL,
      data_source_id varchar NOT NULL REFERENCES data_sources(id) ON DELETE CASCADE,
      file_id varchar NOT NULL,
      name varchar NOT NULL,
      mime_type varchar NOT NULL,
      registered_at timestamptz NOT NULL,
      UNIQUE (data_source_id, file_id)
    )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE drive_files`);
    await q.query(`DROP TABLE drive_sources`);
    await q.query(`DROP TABLE drive_grants`);
  }
}
