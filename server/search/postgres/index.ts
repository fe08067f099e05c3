/** The team server's search engines on PostgreSQL: full-text search and pgvector vectors, in the team's database. */
export { PostgresFtsIndex, type PostgresFtsIndexOptions } from "./postgres-fts-index";
export { PostgresVectorStore } from "./postgres-vector-store";
