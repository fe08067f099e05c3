import type { DataSource } from "typeorm";
import type { ChunkVector, VectorHit, VectorStore } from "../vector-store";

/** Serialises table creation across processes (any constant distinct from the FTS index's). */
const SCHEMA_LOCK_KEY = 7_314_002;

type Engine = "pgvector" | "exact";

/**
 * A team server's vectors in PostgreSQL. Where the database has the pgvector extension, a
 * `vector` column searched with its cosine-distance operator `<=>`; otherwise a plain
 * `real[]` column with exact cosine similarity computed in SQL (vectors are stored at unit
 * length, so it is a dot product), which docs/user-guide.md ("Hybrid retrieval") says is quick enough up to a measured
 * number of chunks per collection. The pgvector path follows pgvector's documented operators;
 * the tests run the fallback (Debian 12's PostgreSQL has no pgvector).
 */
export class PostgresVectorStore implements VectorStore {
  private constructor(
    private readonly db: DataSource,
    private readonly kind: Engine,
  ) {}

  get engine(): string {
    return this.kind === "pgvector" ? "pgvector" : "exact similarity in SQL (no pgvector)";
  }

  /** Picks the engine the database allows and makes its table; `forceExact` skips pgvector (tests, benchmarks). */
  static async open(db: DataSource, forceExact = false): Promise<PostgresVectorStore> {
    const available = forceExact ? [] : ((await db.query("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")) as unknown[]);
    let kind: Engine = "exact";
    if (available.length > 0) {
      try {
        await db.query("CREATE EXTENSION IF NOT EXISTS vector");
        kind = "pgvector";
      } catch {
        // Available but not ours to create (needs a superuser or the database owner): the fallback works the same.
      }
    }
    const store = new PostgresVectorStore(db, kind);
    await db.transaction(async (tx) => {
      await tx.query("SELECT pg_advisory_xact_lock($1)", [SCHEMA_LOCK_KEY]);
      await tx.query(`CREATE TABLE IF NOT EXISTS ${store.table} (
        collection_id varchar NOT NULL,
        document_id varchar NOT NULL,
        source_id varchar NOT NULL,
        chunk_index integer NOT NULL,
        path text NOT NULL,
        title text NOT NULL,
        preview text NOT NULL,
        hash varchar NOT NULL,
        model varchar NOT NULL,
        embedding ${kind === "pgvector" ? "vector" : "real[]"} NOT NULL,
        PRIMARY KEY (collection_id, document_id, chunk_index)
      )`);
      await tx.query(`CREATE INDEX IF NOT EXISTS ${store.table}_hash ON ${store.table} (collection_id, hash)`);
    });
    return store;
  }

  /** Each engine its own table: a database that gains pgvector later starts its vectors afresh (the next run embeds them). */
  private get table(): string {
    return this.kind === "pgvector" ? "search_pgvectors" : "search_vectors";
  }

  async embeddedDocuments(collectionId: string, model: string): Promise<Map<string, number>> {
    await this.db.query(`DELETE FROM ${this.table} WHERE collection_id = $1 AND model <> $2`, [collectionId, model]);
    const rows = (await this.db.query(`SELECT document_id, count(*)::int AS n FROM ${this.table} WHERE collection_id = $1 GROUP BY document_id`, [collectionId])) as { document_id: string; n: number }[];
    return new Map(rows.map((r) => [r.document_id, Number(r.n)]));
  }

  async vectorsByHash(collectionId: string, hashes: string[]): Promise<Map<string, Float32Array>> {
    if (hashes.length === 0) return new Map();
    const rows = (await this.db.query(
      `SELECT DISTINCT ON (hash) hash, embedding::real[] AS embedding FROM ${this.table} WHERE collection_id = $1 AND hash = ANY($2)`,
      [collectionId, hashes],
    )) as { hash: string; embedding: number[] }[];
    return new Map(rows.map((r) => [r.hash, Float32Array.from(r.embedding)]));
  }

  async put(collectionId: string, model: string, rows: ChunkVector[]): Promise<void> {
    if (rows.length === 0) return;
    const cast = this.kind === "pgvector" ? "::vector" : "::real[]";
    await this.db.query(
      `INSERT INTO ${this.table} (collection_id, document_id, source_id, chunk_index, path, title, preview, hash, model, embedding)
       SELECT $1, d, src, i, p, t, pr, h, $2, e${cast}
       FROM unnest($3::varchar[], $10::varchar[], $4::int[], $5::text[], $6::text[], $7::text[], $8::varchar[], $9::text[]) AS x(d, src, i, p, t, pr, h, e)
       ON CONFLICT (collection_id, document_id, chunk_index) DO UPDATE SET embedding = EXCLUDED.embedding, hash = EXCLUDED.hash, model = EXCLUDED.model`,
      [
        collectionId,
        model,
        rows.map((r) => r.documentId),
        rows.map((r) => r.chunkIndex),
        rows.map((r) => r.path),
        rows.map((r) => r.title),
        rows.map((r) => r.preview.replace(/\0/g, "")),
        rows.map((r) => r.hash),
        // Text literals both types parse: '[…]' for vector, '{…}' for real[].
        rows.map((r) => (this.kind === "pgvector" ? `[${[...r.vector].join(",")}]` : `{${[...r.vector].join(",")}}`)),
        rows.map((r) => r.sourceId),
      ],
    );
  }

  async removeDocuments(collectionId: string, documentIds: string[]): Promise<void> {
    if (documentIds.length === 0) return;
    await this.db.query(`DELETE FROM ${this.table} WHERE collection_id = $1 AND document_id = ANY($2)`, [collectionId, documentIds]);
  }

  async search(collectionId: string, vector: Float32Array, topK: number): Promise<VectorHit[]> {
    const sql =
      this.kind === "pgvector"
        ? `SELECT document_id, source_id, chunk_index, path, title, preview, 1 - (embedding <=> $2::vector) AS similarity
           FROM ${this.table} WHERE collection_id = $1 ORDER BY embedding <=> $2::vector LIMIT $3`
        : // Measured against a set-based form (every element joined to its query element, summed per
          // chunk) and a CTE-cast query vector: this plain sub-select per row was the quickest.
          `SELECT document_id, source_id, chunk_index, path, title, preview, similarity FROM (
             SELECT document_id, source_id, chunk_index, path, title, preview,
               (SELECT sum(a * b) FROM unnest(embedding, $2::real[]) AS u(a, b)) AS similarity
             FROM ${this.table} WHERE collection_id = $1 AND cardinality(embedding) = cardinality($2::real[])
           ) s ORDER BY similarity DESC LIMIT $3`;
    const literal = this.kind === "pgvector" ? `[${[...vector].join(",")}]` : `{${[...vector].join(",")}}`;
    const rows = (await this.db.query(sql, [collectionId, literal, topK])) as Array<{ document_id: string; source_id: string; chunk_index: number; path: string; title: string; preview: string; similarity: number }>;
    return rows.map((r) => ({ documentId: r.document_id, sourceId: r.source_id, chunkIndex: r.chunk_index, path: r.path, title: r.title, preview: r.preview, similarity: Number(r.similarity) }));
  }

  async drop(collectionId: string): Promise<void> {
    await this.db.query(`DELETE FROM ${this.table} WHERE collection_id = $1`, [collectionId]);
  }

  async close(): Promise<void> {}
}
