import { randomBytes } from "node:crypto";
import path from "node:path";
import type { DataSource } from "typeorm";
import type { Config } from "./config";
import { KIND_ENTITIES } from "./connectors/registry";
import { openDatabase } from "./data/data-source";
import { makeDataDirPrivate } from "./data/private-data-dir";
import { PostgresFtsIndex, PostgresVectorStore } from "./search/postgres";
import type { SearchIndex } from "./search/search-index";
import { ThreadedSqliteIndex } from "./search/threaded-index";
import type { VectorStore } from "./search/vector-store";
import { SqliteVecStore } from "./search/sqlite";
import type { SecretStore } from "./secrets/secrets";
import { DatabaseSecretStore } from "./secrets/database-store";
import { SEAL_KEY_BYTES } from "./secrets/seal";

/** Where a team server without SECRETS_KEY keeps the key it made, in this machine's own store. */
const LOCAL_TEAM_KEY_NAME = "team-secrets-key";

export interface Storage {
  db: DataSource;
  index: SearchIndex;
  /** Chunk embeddings for semantic and hybrid search, beside the index (search/vector-store.ts). */
  vectors: VectorStore;
  secrets: SecretStore;
}

/** The desktop's storage, with its index as the SQLite engine it is: the job threads write through its writer thread. */
export interface SqliteStorage extends Storage {
  index: ThreadedSqliteIndex;
}

export type StorageLogger = { warn(message: string): void; info?(message: string): void };

/** The SQLite index's sizing, taken from the validated configuration (its defaults live in config.ts only). */
export function sqliteIndexOptions(config: Pick<Config, "searchReaders" | "searchQueueLimit" | "searchCacheBytes">) {
  return { readers: { threads: config.searchReaders, queueLimit: config.searchQueueLimit }, searchCacheBytes: config.searchCacheBytes };
}

/**
 * The desktop's storage: SQLite under DATA_DIR with one FTS5 file per collection, vectors beside
 * them, and secrets in the store the composition root opened (the OS keychain or the encrypted file).
 */
export async function openSqliteStorage(
  config: Pick<Config, "dataDir" | "searchReaders" | "searchQueueLimit" | "searchCacheBytes">,
  secrets: SecretStore,
): Promise<SqliteStorage> {
  const db = await openDatabase({ dataDir: config.dataDir, entities: KIND_ENTITIES });
  try {
    const index = new ThreadedSqliteIndex({ dir: path.join(config.dataDir, "indexes"), ...sqliteIndexOptions(config) });
    return { db, index, vectors: new SqliteVecStore(path.join(config.dataDir, "vectors")), secrets };
  } catch (error) {
    await db.destroy();
    throw error;
  }
}

/**
 * A team server's storage: all in PostgreSQL, secrets sealed with SECRETS_KEY, so every process
 * on every machine reads the same ones (`url`: DATABASE_URL). `local` is this machine's own store (a key made without
 * SECRETS_KEY, secrets kept there before the shared store existed).
 */
export async function openPostgresStorage(
  config: Pick<Config, "dataDir" | "secretsKey">,
  url: string,
  local: SecretStore,
  logger: StorageLogger,
): Promise<Storage> {
  const db = await openDatabase({ dataDir: config.dataDir, databaseUrl: url, entities: KIND_ENTITIES });
  try {
    const secrets = await DatabaseSecretStore.open(db, await teamSecretsKey(config.secretsKey, local, logger), local);
    const vectors = await PostgresVectorStore.open(db);
    // Said at every start: an operator can tell whether similarity search uses pgvector or the fallback.
    logger.info?.(`vector search: ${vectors.engine}`);
    return { db, index: new PostgresFtsIndex(db, { logger }), vectors, secrets };
  } catch (error) {
    await db.destroy();
    throw error;
  }
}

/** Before anything is written there: DATA_DIR and what Sluice keeps in it are the user's alone, and the log says what had to change. */
export function keepDataDirPrivate(dataDir: string, logger: { warn(message: string): void }): void {
  const { tightened, failed } = makeDataDirPrivate(dataDir);
  if (tightened.length > 0) {
    logger.warn(`DATA_DIR ${dataDir} was open to other users: removed group and other access from ${tightened.join(", ")}`);
  }
  if (failed.length > 0) logger.warn(`DATA_DIR ${dataDir}: could not make these private to this user: ${failed.join(", ")}`);
}

async function teamSecretsKey(configured: Buffer | null, local: SecretStore, logger: { warn(message: string): void }): Promise<Buffer> {
  if (configured) return configured;
  logger.warn(
    "SECRETS_KEY is not set: the team's secrets are sealed with a key kept on this machine only, so processes on other machines cannot read them (set the same SECRETS_KEY on every machine)",
  );
  const made = await local.getOrCreate(LOCAL_TEAM_KEY_NAME, () => randomBytes(SEAL_KEY_BYTES).toString("base64"));
  return Buffer.from(made, "base64");
}
