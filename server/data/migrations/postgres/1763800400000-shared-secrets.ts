import type { MigrationInterface, QueryRunner } from "typeorm";

/** The PostgreSQL twin of ../1763800400000-shared-secrets.ts. */

export class SharedSecrets1763800400000 implements MigrationInterface {
  name = "SharedSecrets1763800400000";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE secrets (
      name varchar PRIMARY KEY NOT NULL,
      sealed varchar NOT NULL,
      updated_at timestamptz NOT NULL
    )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE secrets`);
  }
}
