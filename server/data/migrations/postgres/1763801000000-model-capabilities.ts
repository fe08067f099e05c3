import type { MigrationInterface, QueryRunner } from "typeorm";

/** The PostgreSQL twin of ../1763801000000-model-capabilities.ts. */
export class ModelCapabilities1763801000000 implements MigrationInterface {
  name = "ModelCapabilities1763801000000";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE models ADD COLUMN capabilities text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE models DROP COLUMN capabilities`);
  }
}
