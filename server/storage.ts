import path from "node:path";
import type { DataSource } from "typeorm";
import type { Config } from "./config";
import { openDatabase } from "./data/data-source";
import { PostgresFtsIndex } from "./search/postgres-fts-index";
import type { SearchIndex } from "./search/search-index";
import { ThreadedSqliteIndex } from "./search/threaded-index";

/**
 * The database and the collection index, chosen in one place for API and worker processes:
 * team server (DATABASE_URL) keeps both in PostgreSQL; the desktop keeps SQLite under
 * DATA_DIR with one FTS5 file per collection.
 */
export async function openStorage(config: Pick<Config, "dataDir" | "databaseUrl">): Promise<{ db: DataSource; index: SearchIndex }> {
  const db = await openDatabase({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
  const index: SearchIndex = config.databaseUrl ? new PostgresFtsIndex(db) : new ThreadedSqliteIndex({ dir: path.join(config.dataDir, "indexes") });
  return { db, index };
}
