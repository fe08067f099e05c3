import type { MigrationInterface, QueryRunner } from "typeorm";

/** The PostgreSQL twin of ../1763800300000-models.ts: same tables, names and constraints in PostgreSQL types. */

export class Models1763800300000 implements MigrationInterface {
  name = "Models1763800300000";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE models (
      id varchar PRIMARY KEY NOT NULL,
      model_name varchar NOT NULL UNIQUE,
      total_tokens_processed bigint NOT NULL DEFAULT 0,
      tokens_per_second double precision NOT NULL DEFAULT 0,
      time_to_first_token_ms double precision,
      size_bytes bigint NOT NULL DEFAULT 0,
      digest varchar NOT NULL DEFAULT '',
      family varchar,
      parameter_size varchar,
      quantization varchar,
      pulled_at timestamptz NOT NULL,
      benchmarked_at timestamptz
    )`);
    await q.query(`CREATE TABLE user_models (
      id varchar PRIMARY KEY NOT NULL,
      user_id varchar NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      model_id varchar NOT NULL REFERENCES models(id) ON DELETE CASCADE,
      hardware_notes varchar NOT NULL DEFAULT '',
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      UNIQUE (user_id, model_id)
    )`);
    await q.query(`CREATE INDEX user_models_model ON user_models (model_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE user_models`);
    await q.query(`DROP TABLE models`);
  }
}
