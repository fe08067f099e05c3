import type { MigrationInterface, QueryRunner } from "typeorm";

/** What a catalog model can do, from /api/show (`completion`, `embedding`, ...): the Ask view lists only models that write text. NULL: not known (recorded before this). */
export class ModelCapabilities1763801000000 implements MigrationInterface {
  name = "ModelCapabilities1763801000000";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE models ADD COLUMN capabilities text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE models DROP COLUMN capabilities`);
  }
}
