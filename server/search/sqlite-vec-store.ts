import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { getLoadablePath } from "sqlite-vec";
import { sqliteNativeBinding } from "../data/sqlite-binding";
import type { ChunkVector, VectorHit, VectorStore } from "./vector-store";

/**
 * The desktop's vectors: one SQLite file per collection (`<dir>/<id>.db`, beside the FTS5
 * files' folder, not inside them), with sqlite-vec's vec0 table for nearest-neighbour search
 * and a plain table for what a hit shows. vec0 fixes its dimension when created, so the table
 * is made on the first put and remade when the model changes.
 */
export class SqliteVecStore implements VectorStore {
  readonly engine = "sqlite-vec";
  private readonly open = new Map<string, Database.Database>();

  constructor(private readonly dir: string) {}

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
    if (!db || !hasVectors(db)) return found;
    const read = db.prepare("SELECT v.embedding FROM chunk_vectors c JOIN vectors v ON v.rowid = c.rowid WHERE c.hash = ? LIMIT 1").pluck();
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
        db.exec(`CREATE VIRTUAL TABLE vectors USING vec0(embedding float[${dimensions}] distance_metric=cosine)`);
        db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('model', ?), ('dimensions', ?)").run(model, String(dimensions));
      }
      const remove = db.prepare("SELECT rowid FROM chunk_vectors WHERE document_id = ? AND chunk_index = ?").pluck();
      const insert = db.prepare("INSERT INTO chunk_vectors (document_id, source_id, chunk_index, path, title, preview, hash) VALUES (?, ?, ?, ?, ?, ?, ?)");
      const insertVector = db.prepare("INSERT INTO vectors (rowid, embedding) VALUES (?, ?)");
      for (const row of rows) {
        const old = remove.get(row.documentId, row.chunkIndex) as number | undefined;
        if (old !== undefined) deleteRows(db, [old]);
        const { lastInsertRowid } = insert.run(row.documentId, row.sourceId, row.chunkIndex, row.path, row.title, row.preview, row.hash);
        // vec0 takes rowids only as BigInt through better-sqlite3.
        insertVector.run(BigInt(lastInsertRowid), Buffer.from(row.vector.buffer, row.vector.byteOffset, row.vector.byteLength));
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
    if (!db || !hasVectors(db) || storedDimensions(db) !== vector.length) return [];
    const rows = db
      .prepare(
        `SELECT c.document_id, c.source_id, c.chunk_index, c.path, c.title, c.preview, n.distance
         FROM (SELECT rowid, distance FROM vectors WHERE embedding MATCH ? AND k = ?) n
         JOIN chunk_vectors c ON c.rowid = n.rowid ORDER BY n.distance`,
      )
      .all(Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength), topK) as Array<{ document_id: string; source_id: string; chunk_index: number; path: string; title: string; preview: string; distance: number }>;
    return rows.map((r) => ({ documentId: r.document_id, sourceId: r.source_id, chunkIndex: r.chunk_index, path: r.path, title: r.title, preview: r.preview, similarity: 1 - r.distance }));
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
    // Collection ids are UUIDs; nothing else may name a file here.
    if (!/^[0-9a-f-]+$/i.test(collectionId)) throw new Error("Invalid collection id");
    return path.join(this.dir, `${collectionId.toLowerCase()}.db`);
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
    `);
    this.open.set(collectionId, db);
    return db;
  }
}

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

function hasVectors(db: Database.Database): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'vectors'").get() !== undefined;
}

function clear(db: Database.Database): void {
  db.exec("DROP TABLE IF EXISTS vectors; DELETE FROM chunk_vectors; DELETE FROM meta;");
}

function deleteRows(db: Database.Database, rowids: number[]): void {
  const row = db.prepare("DELETE FROM chunk_vectors WHERE rowid = ?");
  const vector = db.prepare("DELETE FROM vectors WHERE rowid = ?");
  for (const id of rowids) {
    row.run(id);
    vector.run(BigInt(id));
  }
}
