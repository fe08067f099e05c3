import "reflect-metadata";
import fs from "node:fs";
import path from "node:path";
import { DataSource } from "typeorm";
import { types as pgTypes } from "pg";
import { lockTransactions, serializeTransactions } from "./serial-transactions";
import { sqliteNativeBinding } from "./sqlite-binding";
import { Collection } from "./entities/collection.entity";
import { GroupMember } from "./entities/group-member.entity";
import { Group } from "./entities/group.entity";
import { User } from "./entities/user.entity";
import { DataSourceRecord } from "./entities/data-source.entity";
import { IngestJob } from "./entities/ingest-job.entity";
import { Pipeline } from "./entities/pipeline.entity";
import { AccountsGroupsCollections1763800000000 } from "./migrations/1763800000000-accounts-groups-collections";
import { SourcesPipelinesJobs1763800100000 } from "./migrations/1763800100000-sources-pipelines-jobs";
import { Drive1763800200000 } from "./migrations/1763800200000-drive";
import { ModelRecord } from "./entities/model.entity";
import { UserModelRecord } from "./entities/user-model.entity";
import { Models1763800300000 } from "./migrations/1763800300000-models";
import { StoredSecret } from "./entities/stored-secret.entity";
import { SharedSecrets1763800400000 } from "./migrations/1763800400000-shared-secrets";
import { FolderSources1763800500000 } from "./migrations/1763800500000-folder-sources";
import { JobStats1763800610000 } from "./migrations/1763800610000-job-stats";
import { PipelineSchedules1763800700000 } from "./migrations/1763800700000-pipeline-schedules";
import { JobSkippedFiles1763800900000 } from "./migrations/1763800900000-job-skipped-files";
import { PipelineSchedule } from "./entities/pipeline-schedule.entity";
import { Conversation } from "./entities/conversation.entity";
import { ConversationTurn } from "./entities/conversation-turn.entity";
import { Conversations1763800850000 } from "./migrations/1763800850000-conversations";
import { Conversations1763800850000 as PgConversations } from "./migrations/postgres/1763800850000-conversations";
import { AccountsGroupsCollections1763800000000 as PgAccountsGroupsCollections } from "./migrations/postgres/1763800000000-accounts-groups-collections";
import { SourcesPipelinesJobs1763800100000 as PgSourcesPipelinesJobs } from "./migrations/postgres/1763800100000-sources-pipelines-jobs";
import { Drive1763800200000 as PgDrive } from "./migrations/postgres/1763800200000-drive";
import { Models1763800300000 as PgModels } from "./migrations/postgres/1763800300000-models";
import { SharedSecrets1763800400000 as PgSharedSecrets } from "./migrations/postgres/1763800400000-shared-secrets";
import { FolderSources1763800500000 as PgFolderSources } from "./migrations/postgres/1763800500000-folder-sources";
import { JobStats1763800610000 as PgJobStats } from "./migrations/postgres/1763800610000-job-stats";
import { PipelineSchedules1763800700000 as PgPipelineSchedules } from "./migrations/postgres/1763800700000-pipeline-schedules";
import { JobSkippedFiles1763800900000 as PgJobSkippedFiles } from "./migrations/postgres/1763800900000-job-skipped-files";
import { CollectionEmbeddingModel1763800950000 } from "./migrations/1763800950000-collection-embedding-model";
import { CollectionEmbeddingModel1763800950000 as PgCollectionEmbeddingModel } from "./migrations/postgres/1763800950000-collection-embedding-model";
import { ModelCapabilities1763801000000 } from "./migrations/1763801000000-model-capabilities";
import { ModelCapabilities1763801000000 as PgModelCapabilities } from "./migrations/postgres/1763801000000-model-capabilities";
import { JobPermissionsChanged1763803320000 } from "./migrations/1763803320000-job-permissions-changed";
import { JobPermissionsChanged1763803320000 as PgJobPermissionsChanged } from "./migrations/postgres/1763803320000-job-permissions-changed";
import { Invitation } from "./entities/invitation.entity";
import { Invitations1763801360000 } from "./migrations/1763801360000-invitations";
import { Invitations1763801360000 as PgInvitations } from "./migrations/postgres/1763801360000-invitations";
import { SmbPermissions1763803310000 } from "./migrations/1763803310000-smb-permissions";
import { SmbPermissions1763803310000 as PgSmbPermissions } from "./migrations/postgres/1763803310000-smb-permissions";
import { SmbAccountLink } from "./entities/smb-account-link.entity";
import { ApiKeysAudit1763801380000 } from "./migrations/1763801380000-api-keys-audit";
import { ApiKeysAudit1763801380000 as PgApiKeysAudit } from "./migrations/postgres/1763801380000-api-keys-audit";
import { ApiKey } from "./entities/api-key.entity";
import { AuditEvent } from "./entities/audit-event.entity";

/** The entities every part of the service shares; each source kind brings its own (connectors/registry.ts KIND_ENTITIES). */
const ENTITIES = [User, Group, GroupMember, Collection, DataSourceRecord, Pipeline, IngestJob, ModelRecord, UserModelRecord, StoredSecret, PipelineSchedule, Conversation, ConversationTurn, Invitation, SmbAccountLink, ApiKey, AuditEvent];
export const MIGRATIONS = [
  AccountsGroupsCollections1763800000000,
  SourcesPipelinesJobs1763800100000,
  Drive1763800200000,
  Models1763800300000,
  SharedSecrets1763800400000,
  FolderSources1763800500000,
  JobStats1763800610000,
  PipelineSchedules1763800700000,
  Conversations1763800850000,
  JobSkippedFiles1763800900000,
  CollectionEmbeddingModel1763800950000,
  ModelCapabilities1763801000000,
  Invitations1763801360000,
  ApiKeysAudit1763801380000,
  SmbPermissions1763803310000,
  JobPermissionsChanged1763803320000,
];
/** The same migrations (same names, tables and constraints) in PostgreSQL types. */
const POSTGRES_MIGRATIONS = [PgAccountsGroupsCollections, PgSourcesPipelinesJobs, PgDrive, PgModels, PgSharedSecrets, PgFolderSources, PgJobStats, PgPipelineSchedules, PgConversations, PgJobSkippedFiles, PgCollectionEmbeddingModel, PgModelCapabilities, PgInvitations, PgApiKeysAudit, PgSmbPermissions, PgJobPermissionsChanged];

export interface StorageOptions {
  dataDir: string;
  /** postgres:// URL; null for the SQLite file under dataDir. */
  databaseUrl?: string | null;
  /** Entities mapped besides ENTITIES: the source kinds' details tables (passed in from above, so data/ imports no connector). */
  // biome-ignore lint/complexity/noBannedTypes: TypeORM's own type for an entity class is Function
  entities?: Function[];
}

/**
 * Opens the database and brings its schema up to date: PostgreSQL when a URL is given,
 * else (creating if needed) the SQLite file under dataDir. A bare string is a dataDir.
 */
export async function openDatabase(options: StorageOptions | string): Promise<DataSource> {
  const { dataDir, databaseUrl, entities: extra = [] } = typeof options === "string" ? { dataDir: options, databaseUrl: null } : options;
  const entities = [...ENTITIES, ...extra];
  if (databaseUrl) return openPostgres(databaseUrl, entities);
  fs.mkdirSync(dataDir, { recursive: true });
  const db = new DataSource({
    type: "better-sqlite3",
    database: path.join(dataDir, "sluice.db"),
    nativeBinding: sqliteNativeBinding(),
    entities,
    migrations: MIGRATIONS,
    migrationsRun: false,
    synchronize: false,
    logging: false,
    // WAL keeps readers (API requests) from waiting on the ingestion writer.
    enableWAL: true,
    prepareDatabase: (raw: { pragma(sql: string): unknown }) => {
      raw.pragma("foreign_keys = ON");
      raw.pragma("busy_timeout = 5000");
    },
  });
  await db.initialize();
  await db.runMigrations({ transaction: "each" });
  serializeTransactions(db);
  return db;
}

/**
 * Session settings for every connection of the pool, set as each connects (applySessionSettings).
 * SETs rather than the `options` startup parameter, which connection poolers such as PgBouncer
 * refuse.
 *
 * `jit = off`: PostgreSQL compiles a statement whose estimated cost passes `jit_above_cost`
 * (100,000): a search's ranking estimates the walks it may never finish (a LIMIT stops them), so
 * at 1,000,000 chunks most searches were compiled, ~55 ms each (EXPLAIN ANALYZE: 194 functions,
 * emission 48 ms), for a statement that ran in ~25 ms. Nothing Sluice runs is long enough to
 * repay compiling.
 *
 * `idle_in_transaction_session_timeout`: a process that stops inside a transaction without its
 * connection closing (power lost, frozen, network gone) would otherwise hold that transaction's
 * locks, the writer lock of every transaction among them, until TCP notices (hours): every write
 * of every other process would wait, and the API's pool run dry (503s). PostgreSQL ends such a
 * session instead (decision 0236). No transaction here waits on anything but its own statements.
 */
/** Longer than any pause inside one of Sluice's transactions on a loaded machine; short enough that the dead process's job is recorded within about 40 s (BullMQ's 15 s lock, then this). */
const IDLE_IN_TRANSACTION_LIMIT_MS = 20_000;
const SESSION_SETTINGS = ["SET jit = off", `SET idle_in_transaction_session_timeout = ${IDLE_IN_TRANSACTION_LIMIT_MS}`];

/**
 * The pool's onConnect hook (pg-pool awaits it before the connection is handed to anyone): the
 * settings go in one round trip ahead of any statement, rather than queued on a connection a
 * caller already holds (pg 8 warns of that queuing and pg 9 removes it).
 */
async function applySessionSettings(client: { query(sql: string): Promise<unknown> }): Promise<void> {
  await client.query(SESSION_SETTINGS.join("; "));
}

let int8Parsed = false;
/** Any fixed key, distinct from the writer and search-schema locks. */
const MIGRATION_LOCK_KEY = 0x51c5;

// biome-ignore lint/complexity/noBannedTypes: TypeORM's own type for an entity class is Function
async function openPostgres(url: string, entities: Function[]): Promise<DataSource> {
  if (!int8Parsed) {
    // bigint (byte counts, count(*)) as numbers, as SQLite answers them; every value here is far below 2^53.
    pgTypes.setTypeParser(pgTypes.builtins.INT8, (value: string) => Number(value));
    int8Parsed = true;
  }
  const db = new DataSource({
    type: "postgres",
    url,
    entities,
    migrations: POSTGRES_MIGRATIONS,
    migrationsRun: false,
    synchronize: false,
    logging: false,
    extra: { max: 10, connectionTimeoutMillis: 10_000, onConnect: applySessionSettings },
  });
  await db.initialize();
  // The API and worker processes may start together: one migrates, the other waits for it.
  const lock = db.createQueryRunner();
  try {
    await lock.connect();
    await lock.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK_KEY]);
    await db.runMigrations({ transaction: "all" });
  } finally {
    await lock.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK_KEY]).catch(() => undefined);
    await lock.release();
  }
  lockTransactions(db);
  return db;
}
