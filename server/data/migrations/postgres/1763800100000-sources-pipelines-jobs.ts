import type { MigrationInterface, QueryRunner } from "typeorm";

/** The PostgreSQL twin of ../1763800100000-sources-pipelines-jobs.ts: same tables, names and constraints in PostgreSQL types. */

export class SourcesPipelinesJobs1763800100000 implements MigrationInterface {
  name = "SourcesPipelinesJobs1763800100000";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE data_sources (
      id varchar PRIMARY KEY NOT NULL,
      name varchar NOT NULL,
      kind varchar NOT NULL CHECK (kind IN ('smb', 'drive')),
      owner_group_id varchar NOT NULL REFERENCES user_groups(id),
      auto_collection_id varchar REFERENCES collections(id) ON DELETE SET NULL,
      created_at timestamptz NOT NULL
    )`);
    await q.query(`CREATE INDEX data_sources_owner ON data_sources (owner_group_id)`);
    await q.query(`CREATE TABLE smb_sources (
      data_source_id varchar PRIMARY KEY NOT NULL REFERENCES data_sources(id) ON DELETE CASCADE,
      remote_system_username varchar NOT NULL,
      remote_system_name varchar NOT NULL,
      local_system_name varchar NOT NULL,
      default_ip varchar,
      port integer NOT NULL
    )`);
    await q.query(`CREATE TABLE pipelines (
      id varchar PRIMARY KEY NOT NULL,
      name varchar NOT NULL,
      description varchar NOT NULL,
      data_source_id varchar NOT NULL REFERENCES data_sources(id) ON DELETE CASCADE,
      collection_id varchar NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
      status varchar NOT NULL,
      created_at timestamptz NOT NULL,
      UNIQUE (data_source_id, collection_id)
    )`);
    await q.query(`CREATE INDEX pipelines_collection ON pipelines (collection_id)`);
    await q.query(`CREATE TABLE ingest_jobs (
      id varchar PRIMARY KEY NOT NULL,
      pipeline_id varchar NOT NULL REFERENCES pipelines(id) ON DELETE CASCADE,
      status varchar NOT NULL CHECK (status IN ('processing', 'completed', 'failed')),
      run_state varchar NOT NULL CHECK (run_state IN ('queued', 'running', 'done')),
      queue_seq integer NOT NULL,
      entities_discovered integer NOT NULL DEFAULT 0,
      entities_processed integer NOT NULL DEFAULT 0,
      entities_failed integer NOT NULL DEFAULT 0,
      entities_skipped integer NOT NULL DEFAULT 0,
      bytes_processed bigint NOT NULL DEFAULT 0,
      discovery_complete boolean NOT NULL DEFAULT false,
      current_entity varchar NOT NULL DEFAULT '',
      error_message varchar,
      errors text NOT NULL DEFAULT '[]',
      created_at timestamptz NOT NULL,
      started_at timestamptz NOT NULL,
      completed_at timestamptz
    )`);
    await q.query(`CREATE INDEX ingest_jobs_pipeline ON ingest_jobs (pipeline_id, queue_seq)`);
    await q.query(`CREATE INDEX ingest_jobs_run_state ON ingest_jobs (run_state, queue_seq)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE ingest_jobs`);
    await q.query(`DROP TABLE pipelines`);
    await q.query(`DROP TABLE smb_sources`);
    await q.query(`DROP TABLE data_sources`);
  }
}
