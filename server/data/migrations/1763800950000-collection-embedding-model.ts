import type { MigrationInterface, QueryRunner } from "typeorm";

/** Hybrid retrieval (issue 23): a collection's embedding model, null when it has none. */
export class CollectionEmbeddingModel1763800950000 implements MigrationInterface {
  name = "CollectionEmbeddingModel1763800950000";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE collections ADD COLUMN embedding_model varchar`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE collections DROP COLUMN embedding_model`);
  }
}
