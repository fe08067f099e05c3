import type { MigrationInterface, QueryRunner } from "typeorm";

/** The PostgreSQL twin of ../1763800000000-accounts-groups-collections.ts: same tables, names and constraints in PostgreSQL types. */

export class AccountsGroupsCollections1763800000000 implements MigrationInterface {
  name = "AccountsGroupsCollections1763800000000";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE users (
      id varchar PRIMARY KEY NOT NULL,
      email varchar NOT NULL UNIQUE,
      password_hash varchar,
      display_name varchar,
      avatar_url varchar,
      idp_subject varchar UNIQUE,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      last_sign_in_at timestamptz
    )`);
    await q.query(`CREATE TABLE user_groups (
      id varchar PRIMARY KEY NOT NULL,
      group_name varchar NOT NULL UNIQUE,
      group_permission varchar NOT NULL CHECK (group_permission IN ('read', 'write', 'none')),
      parent_group_id varchar REFERENCES user_groups(id) ON DELETE SET NULL,
      created_at timestamptz NOT NULL
    )`);
    await q.query(`CREATE TABLE group_members (
      group_id varchar NOT NULL REFERENCES user_groups(id) ON DELETE CASCADE,
      user_id varchar NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (group_id, user_id)
    )`);
    await q.query(`CREATE INDEX group_members_user ON group_members (user_id)`);
    await q.query(`CREATE TABLE collections (
      id varchar PRIMARY KEY NOT NULL,
      name varchar NOT NULL UNIQUE,
      owner_group_id varchar NOT NULL REFERENCES user_groups(id),
      created_at timestamptz NOT NULL
    )`);
    await q.query(`CREATE INDEX collections_owner ON collections (owner_group_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE collections`);
    await q.query(`DROP TABLE group_members`);
    await q.query(`DROP TABLE user_groups`);
    await q.query(`DROP TABLE users`);
  }
}
