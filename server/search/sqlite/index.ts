/** The desktop's search engines on SQLite: FTS5 full-text (one file per collection) and sqlite-vec vectors. */
export { SqliteFtsIndex, type SqliteFtsIndexOptions } from "./sqlite-fts-index";
export { RANKING_LIMITS, type RankingLimits } from "./sqlite-fts-ranking";
export { SQLITE_INDEX_MIGRATIONS } from "./sqlite-fts-schema";
export { SqliteVecStore, vecExtensionPath } from "./sqlite-vec-store";
