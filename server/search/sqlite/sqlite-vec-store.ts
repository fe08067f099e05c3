import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { getLoadablePath } from "sqlite-vec";
import { sqliteNativeBinding } from "../../data/sqlite-binding";
import type { ChunkVector, VectorHit, VectorStore } from "../vector-store";
import { collectionFile } from "./collection-file";

/**
 * The desktop's vectors: one SQLite file per collection (`<dir>/<id>.db`, beside the FTS5
 * files' folder, not inside them): each chunk's full vector in a plain table, a 1-bit copy of
 * it (`vec_quantize_binary`, when the dimension is a multiple of 8, as every embedding model's
 * is) in another for a quick first pass, and a plain table for what a hit shows.
 *
 * Why two stages: sqlite-vec 0.1 has no ANN index, so every search compares the query with every
 * vector: ~70 ms at 100,000 chunks of 768 dimensions, past an ask's budget. A big collection is
 * searched by Hamming distance over the 1-bit copies (32 times less to read), and the nearest
 * candidates are then ranked exactly by cosine similarity of their full vectors. A small one is
 * ranked exactly over all of its vectors. The 1-bit copies sit in a plain table ranked by
 * SQLite's own top-k sorter rather than in a vec0 `bit[]` table: vec0 0.1 picks its k nearest
 * with k passes over each chunk of 1,024 vectors, so 200 candidates out of 100,000 took ~23 ms
 * there against ~9 ms here.
 */
export class SqliteVecStore implements VectorStore {
  readonly engine = "sqlite-vec";
  private readonly open = new Map<string, Database.Database>();
  private readonly exactUpTo: number;

  /** `exactUpTo`: collections with at most this many vectors are searched exactly (tests lower it to reach the two-stage search). */
  constructor(
    private readonly dir: string,
    options: { exactUpTo?: number } = {},
  ) {
    this.exactUpTo = options.exactUpTo ?? EXACT_SEARCH_UP_TO;
  }

  async embeddedDocuments(collectionId: string, model: string): Promise<Map<string, number>> {
    const db = this.database(collectionId, false);
    if (!db) return new Map();
    if (storedModel(db) !== model) clear(db);
    const rows = db.prepare("SELECT document_id, count(*) AS n FROM chunk_vectors GROUP BY document_id").all() as { document_id: string; n: number }[];
    return new Map(rows.map((r) => [r.document_id, r.n]));
  }

  async vectorsByHash(collectionId: string, hashes: string[]): Promise<Map<string, Float32Array>> {
    const db = this.database(collectionId, false);
    const found = new Map<string, Float32Array>();
    if (!db) return found;
    const read = db.prepare("SELECT v.embedding FROM chunk_vectors c JOIN vector_floats v ON v.rowid = c.rowid WHERE c.hash = ? LIMIT 1").pluck();
    for (const hash of hashes) {
      const blob = read.get(hash) as Buffer | undefined;
      if (blob) found.set(hash, new Float32Array(blob.buffer.slice(blob.byteOffset, blob.byteOffset + blob.byteLength)));
    }
    return found;
  }

  async put(collectionId: string, model: string, rows: ChunkVector[]): Promise<void> {
    if (rows.length === 0) return;
    const db = this.database(collectionId, true)!;
    const dimensions = rows[0].vector.length;
    db.transaction(() => {
      if (storedModel(db) !== model || storedDimensions(db) !== dimensions) {
        clear(db);
        db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('model', ?), ('dimensions', ?)").run(model, String(dimensions));
      }
      const remove = db.prepare("SELECT rowid FROM chunk_vectors WHERE document_id = ? AND chunk_index = ?").pluck();
      const insert = db.prepare("INSERT INTO chunk_vectors (document_id, source_id, chunk_index, path, title, preview, hash) VALUES (?, ?, ?, ?, ?, ?, ?)");
      const insertVector = db.prepare("INSERT INTO vector_floats (rowid, embedding) VALUES (?, ?)");
      const insertBits = dimensions % 8 === 0 ? db.prepare("INSERT INTO vector_signs (rowid, bits) VALUES (?, vec_quantize_binary(?))") : null;
      for (const row of rows) {
        const old = remove.get(row.documentId, row.chunkIndex) as number | undefined;
        if (old !== undefined) deleteRows(db, [old]);
        const { lastInsertRowid } = insert.run(row.documentId, row.sourceId, row.chunkIndex, row.path, row.title, row.preview, row.hash);
        const blob = Buffer.from(row.vector.buffer, row.vector.byteOffset, row.vector.byteLength);
        insertVector.run(lastInsertRowid, blob);
        insertBits?.run(lastInsertRowid, blob);
      }
    }).immediate();
  }

  async removeDocuments(collectionId: string, documentIds: string[]): Promise<void> {
    const db = this.database(collectionId, false);
    if (!db || documentIds.length === 0) return;
    const rowids = db.prepare("SELECT rowid FROM chunk_vectors WHERE document_id = ?").pluck();
    db.transaction(() => {
      for (const id of documentIds) deleteRows(db, rowids.all(id) as number[]);
    }).immediate();
  }

  async search(collectionId: string, vector: Float32Array, topK: number): Promise<VectorHit[]> {
    const db = this.database(collectionId, false);
    if (!db || storedDimensions(db) !== vector.length) return [];
    const query = Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
    // "More than exactUpTo?" reads at most exactUpTo + 1 rows of the smallest table: a full count(*) cost ~5 ms at 100,000 chunks.
    const twoStage =
      vector.length % 8 === 0 && (db.prepare("SELECT count(*) FROM (SELECT 1 FROM vector_signs LIMIT ?)").pluck().get(this.exactUpTo + 1) as number) > this.exactUpTo;
    let nearest: Array<{ rowid: number; distance: number }>;
    if (twoStage) {
      // The query's own 1-bit copy once, rather than an expression SQLite might work out per row.
      const bits = db.prepare("SELECT vec_quantize_binary(?)").pluck().get(query) as Buffer;
      nearest = db
        .prepare(
          `SELECT rowid, vec_distance_cosine(embedding, ?) AS distance FROM vector_floats
           WHERE rowid IN (SELECT rowid FROM vector_signs ORDER BY vec_distance_hamming(vec_bit(bits), vec_bit(?)) LIMIT ?)
           ORDER BY distance LIMIT ?`,
        )
        .all(query, bits, Math.max(topK * CANDIDATES_PER_HIT, MIN_CANDIDATES), topK) as typeof nearest;
    } else {
      nearest = db.prepare("SELECT rowid, vec_distance_cosine(embedding, ?) AS distance FROM vector_floats ORDER BY distance LIMIT ?").all(query, topK) as typeof nearest;
    }
    const read = db.prepare("SELECT document_id, source_id, chunk_index, path, title, preview FROM chunk_vectors WHERE rowid = ?");
    return nearest.flatMap((n) => {
      const r = read.get(n.rowid) as { document_id: string; source_id: string; chunk_index: number; path: string; title: string; preview: string } | undefined;
      return r ? [{ documentId: r.document_id, sourceId: r.source_id, chunkIndex: r.chunk_index, path: r.path, title: r.title, preview: r.preview, similarity: 1 - n.distance }] : [];
    });
  }

  async drop(collectionId: string): Promise<void> {
    this.open.get(collectionId)?.close();
    this.open.delete(collectionId);
    for (const suffix of ["", "-wal", "-shm"]) fs.rmSync(this.filePath(collectionId) + suffix, { force: true });
  }

  async close(): Promise<void> {
    for (const db of this.open.values()) db.close();
    this.open.clear();
  }

  private filePath(collectionId: string): string {
    return collectionFile(this.dir, collectionId);
  }

  private database(collectionId: string, create: boolean): Database.Database | undefined {
    const cached = this.open.get(collectionId);
    if (cached) return cached;
    const file = this.filePath(collectionId);
    if (!create && !fs.existsSync(file)) return undefined;
    fs.mkdirSync(this.dir, { recursive: true });
    const db = new Database(file, { nativeBinding: sqliteNativeBinding() });
    db.pragma("journal_mode = WAL");
    db.loadExtension(vecExtensionPath());
    db.exec(`
      CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS chunk_vectors (
        rowid INTEGER PRIMARY KEY,
        document_id TEXT NOT NULL,
        source_id TEXT NOT NULL,
        chunk_index INTEGER NOT NULL,
        path TEXT NOT NULL,
        title TEXT NOT NULL,
        preview TEXT NOT NULL,
        hash TEXT NOT NULL
      );
      CREATE INDEX IF NOT EXISTS chunk_vectors_document ON chunk_vectors (document_id, chunk_index);
      CREATE INDEX IF NOT EXISTS chunk_vectors_hash ON chunk_vectors (hash);
      CREATE TABLE IF NOT EXISTS vector_floats (rowid INTEGER PRIMARY KEY, embedding BLOB NOT NULL);
      CREATE TABLE IF NOT EXISTS vector_signs (rowid INTEGER PRIMARY KEY, bits BLOB NOT NULL);
    `);
    upgradeLayout(db);
    this.open.set(collectionId, db);
    return db;
  }
}

/** Collections up to this many vectors are ranked exactly over all of them (~11 ms at 5,000 chunks of 768 dimensions); bigger ones in two stages. */
const EXACT_SEARCH_UP_TO = 5_000;
/** Candidates the 1-bit stage reads per hit asked for, and at least: the exact stage ranks them. */
const CANDIDATES_PER_HIT = 10;
const MIN_CANDIDATES = 200;

/**
 * sqlite-vec's loadable file for this platform, from its optional per-platform package. In the
 * packaged app that file is unpacked beside app.asar (electron-builder.yml, asarUnpack): SQLite
 * loads extensions through the OS, which cannot read inside an asar archive.
 */
export function vecExtensionPath(loadable = getLoadablePath()): string {
  return loadable.replace(`app.asar${path.sep}`, `app.asar.unpacked${path.sep}`);
}

function storedModel(db: Database.Database): string | undefined {
  return db.prepare("SELECT value FROM meta WHERE key = 'model'").pluck().get() as string | undefined;
}

function storedDimensions(db: Database.Database): number | undefined {
  const value = db.prepare("SELECT value FROM meta WHERE key = 'dimensions'").pluck().get() as string | undefined;
  return value === undefined ? undefined : Number(value);
}

function hasTable(db: Database.Database, name: string): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE name = ?").get(name) !== undefined;
}

function clear(db: Database.Database): void {
  db.exec("DELETE FROM vector_signs; DELETE FROM vector_floats; DELETE FROM chunk_vectors; DELETE FROM meta;");
}

function deleteRows(db: Database.Database, rowids: number[]): void {
  const row = db.prepare("DELETE FROM chunk_vectors WHERE rowid = ?");
  const vector = db.prepare("DELETE FROM vector_floats WHERE rowid = ?");
  const bits = db.prepare("DELETE FROM vector_signs WHERE rowid = ?");
  for (const id of rowids) {
    row.run(id);
    vector.run(id);
    bits.run(id);
  }
}

/**
 * A file of an older layout is brought to this one once, when opened: the first kept full
 * vectors in a vec0 float table (`vectors`), the second the 1-bit copies in a vec0 `bit[]`
 * table (`vector_bits`); both become plain tables, the 1-bit copies made again from the full vectors.
 */
function upgradeLayout(db: Database.Database): void {
  const first = hasTable(db, "vectors");
  const second = hasTable(db, "vector_bits");
  if (!first && !second) return;
  const dimensions = storedDimensions(db);
  db.transaction(() => {
    if (first) db.exec("INSERT OR REPLACE INTO vector_floats (rowid, embedding) SELECT rowid, embedding FROM vectors; DROP TABLE vectors;");
    if (second) db.exec("DROP TABLE vector_bits;");
    if (dimensions !== undefined && dimensions % 8 === 0) {
      db.exec("DELETE FROM vector_signs; INSERT INTO vector_signs (rowid, bits) SELECT rowid, vec_quantize_binary(embedding) FROM vector_floats");
    }
  }).immediate();
}
