/** The desktop's search engines on SQLite: FTS5 full-text (one file per collection) and sqlite-vec vectors. */
export { SqliteFtsIndex, RANKING_LIMITS, SQLITE_INDEX_MIGRATIONS, type RankingLimits, type SqliteFtsIndexOptions } from "./sqlite-fts-index";
export { SqliteVecStore, vecExtensionPath } from "./sqlite-vec-store";
