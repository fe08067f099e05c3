import crypto from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import Database from "better-sqlite3";
import { sqliteNativeBinding } from "../data/sqlite-binding";
import { NotFoundError } from "../errors";
import type { ChunkInput, ChunkKey, CollectionStats, DocumentHeader, DocumentInput, DocumentSummary, IndexedState, SearchFilter, SearchHit, SearchIndex, SearchOptions, StagedDocument } from "./search-index";
import { MARK_CLOSE, MARK_OPEN, UUID, capPerDocument, clampTopK, clean, folderPrefix, markSnippet, matchAttempts, parseQuery, type QueryUnit } from "./query";
import { toSummary, type DocumentRow } from "./document-row";
import { IndexDamagedError, isCorruption } from "./index-damage";
import { stagedDocument } from "./staged-document";

export { markSnippet, parseQuery, type QueryUnit } from "./query";

/**
 * The collection index on SQLite FTS5: one database file per collection (`<dir>/<id>.db`),
 * so writing one collection never takes the main database's write lock and dropping a
 * collection is deleting its file. Files are opened lazily and kept open until drop/close.
 *
 * A file SQLite cannot read (truncated, overwritten) marks its collection damaged: found by
 * `PRAGMA quick_check` when the file is opened, or by SQLITE_CORRUPT/NOTADB from any later
 * statement. A damaged collection answers IndexDamagedError (stats: indexStatus "damaged")
 * without touching the file again, until moveAside() sets the file aside for a rebuild.
 *
 * Layout of a file (schema version 2):
 * - `documents`: one row per (source_id, path).
 * - `chunks`: side table mapping an FTS rowid to (document_id, chunk_index).
 * - `chunks_fts`: FTS5 over (title, path, body), porter stemming over unicode61 with
 *   diacritics removed, so "cafe" finds "café" and "run" finds "running".
 * - `chunks_exact` (since 2): the same text without stemming, contentless and without
 *   positions (`detail=none`, the cheapest FTS5 index): it only answers "which chunks have
 *   these words in the very form typed", so a file is found by its own rare words even when
 *   their stem is common ("highlighter" among 190 files saying "highlight"). Same rowids.
 *
 * A file of an older version is upgraded when it is opened (version 1 → 2 fills
 * `chunks_exact` from the stored text, in one transaction).
 */

const SCHEMA_VERSION = 2;

/**
 * Several connections (threads, or processes sharing DATA_DIR) may open a new file at once:
 * migrate() reads the version again inside its write transaction, so only the first to take the
 * write lock runs a step (version 1's statements are IF NOT EXISTS besides).
 */
export const SQLITE_INDEX_MIGRATIONS: Record<number, string> = {
  1: `
    CREATE TABLE IF NOT EXISTS documents (
      id TEXT PRIMARY KEY,
      source_id TEXT NOT NULL,
      path TEXT NOT NULL,
      title TEXT NOT NULL,
      size INTEGER NOT NULL,
      modified_at INTEGER NOT NULL,
      version TEXT,
      chunk_count INTEGER NOT NULL,
      indexed_at INTEGER NOT NULL,
      UNIQUE (source_id, path)
    );
    CREATE INDEX IF NOT EXISTS documents_path ON documents (path, source_id);
    CREATE TABLE IF NOT EXISTS chunks (
      rowid INTEGER PRIMARY KEY,
      document_id TEXT NOT NULL,
      chunk_index INTEGER NOT NULL,
      UNIQUE (document_id, chunk_index)
    );
    CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
      title, path, body,
      tokenize = 'porter unicode61 remove_diacritics 2'
    );
  `,
  2: `
    CREATE VIRTUAL TABLE chunks_exact USING fts5(
      title, path, body,
      content = '', contentless_delete = 1, detail = none,
      tokenize = 'unicode61 remove_diacritics 2'
    );
    INSERT INTO chunks_exact (rowid, title, path, body) SELECT rowid, title, path, body FROM chunks_fts;
  `,
};

/**
 * The page cache of the writer's and the main thread's connections, in KiB (SQLite's own
 * default; better-sqlite3 builds with 16 MB). Each open collection file kept up to 16 MB per
 * connection, never given back: ~17 MB more RSS per collection written, and as much again for
 * the quick_check at open, which reads every page. Bulk-writing the bench corpus (2,000 files,
 * 26,700 chunks) took the same CPU with 2 MB as with 16 MB (1.6 s).
 */
const SMALL_CACHE_KIB = 2000;

/** bm25 with column weights (title, path, body): a title hit outweighs a body hit. */
const BM25 = "bm25(chunks_fts, 5.0, 2.0, 1.0)";
/**
 * The most matching chunks one query ranks. Ranking costs ~1 µs per match, so a term found
 * in most chunks would take ~100 ms at 100k chunks; past this many matches, only the most
 * recently indexed ones are ranked. Such a term's idf is near zero anyway.
 */
const RANK_WINDOW = 10_000;
const SNIPPET_TOKENS = 20;

export interface SqliteFtsIndexOptions {
  /** Directory holding one `<collectionId>.db` per collection, e.g. DATA_DIR/indexes. */
  dir: string;
  /**
   * Open files read-only (the search reader threads, index-reader-pool.ts, and the main thread
   * of threaded-index.ts): such an instance never creates or migrates a file, so only the writer
   * ever creates tables, and a file whose schema is not there yet reads as an empty collection.
   */
  readOnly?: boolean;
  /**
   * Run `PRAGMA quick_check` when a read-only instance opens a file (a writable one always
   * does): the thread that reports a collection's index status must find a damaged file at open.
   */
  checkOnOpen?: boolean;
}


interface RankedRow {
  rowid: number;
  bm25: number;
  /** Only with a per-document cap. */
  document_id?: string;
}

interface ChunkRefRow {
  document_id: string;
  source_id: string;
  chunk_index: number;
  path: string;
  title: string;
}

export class SqliteFtsIndex implements SearchIndex {
  private readonly dir: string;
  private readonly open = new Map<string, Database.Database>();
  private readonly readOnly: boolean;
  private readonly checkOnOpen: boolean;
  /** Files found damaged, by path: answered at once rather than re-read per request. */
  private readonly damaged = new Set<string>();
  /** Each open file's `PRAGMA data_version` statement (dataVersion()). */
  private readonly versionStatements = new WeakMap<Database.Database, Database.Statement>();

  constructor(options: SqliteFtsIndexOptions) {
    this.dir = options.dir;
    this.readOnly = options.readOnly ?? false;
    this.checkOnOpen = !this.readOnly || (options.checkOnOpen ?? false);
  }

  async upsertDocument(collectionId: string, doc: DocumentInput): Promise<string> {
    return (await this.upsertDocuments(collectionId, [doc]))[0];
  }

  /**
   * One transaction for the whole batch: FTS5 writes a new index segment per commit, so
   * committing documents in batches rather than one by one is several times faster.
   */
  async upsertDocuments(collectionId: string, docs: DocumentInput[]): Promise<string[]> {
    if (docs.length === 0) return [];
    const db = this.database(collectionId, true)!;
    return this.guarded(collectionId, () => this.writeDocuments(db, docs));
  }

  private writeDocuments(db: Database.Database, docs: DocumentInput[]): string[] {
    const findOld = db.prepare("SELECT id FROM documents WHERE source_id = ? AND path = ?").pluck();
    const insertChunk = db.prepare("INSERT INTO chunks (document_id, chunk_index) VALUES (?, ?)");
    const insertFts = chunkInserter(db);
    const insertDocument = db.prepare(
      `INSERT INTO documents (id, source_id, path, title, size, modified_at, version, chunk_count, indexed_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const ids = docs.map(() => crypto.randomUUID());
    db.transaction(() => {
      docs.forEach((doc, i) => {
        const title = clean(doc.title);
        const docPath = clean(doc.path);
        const old = findOld.get(doc.sourceId, doc.path) as string | undefined;
        // New chunks first; the old version is removed only once they are all in. The new
        // document row comes last because UNIQUE(source_id, path) admits one row at a time.
        for (const chunk of doc.chunks) {
          const { lastInsertRowid } = insertChunk.run(ids[i], chunk.chunkIndex);
          insertFts(lastInsertRowid, title, docPath, clean(chunk.text));
        }
        if (old !== undefined) deleteDocument(db, old);
        insertDocument.run(ids[i], doc.sourceId, doc.path, doc.title, doc.size, doc.modifiedAt.getTime(), doc.version, doc.chunks.length, Date.now());
      });
    }).immediate();
    return ids;
  }

  /**
   * A staged document's chunks are rows without a `documents` row: searches skip them (a hit
   * is joined to its document) until commitStaged writes that row in place of the old one.
   */
  async stageDocument(collectionId: string, doc: DocumentHeader): Promise<StagedDocument> {
    this.database(collectionId, true);
    return stagedDocument(crypto.randomUUID(), {
      add: (id, chunks) => this.stageChunks(collectionId, id, doc, chunks),
      commit: (id, chunkCount) => this.commitStaged(collectionId, id, doc, chunkCount),
      discard: (id) => this.discardStaged(collectionId, id),
    });
  }

  /** One batch of a staged document's chunks, in one transaction. */
  async stageChunks(collectionId: string, documentId: string, doc: DocumentHeader, chunks: ChunkInput[]): Promise<void> {
    const db = this.database(collectionId, true)!;
    const insertChunk = db.prepare("INSERT INTO chunks (document_id, chunk_index) VALUES (?, ?)");
    const insertFts = chunkInserter(db);
    const title = clean(doc.title);
    const docPath = clean(doc.path);
    this.guarded(collectionId, () =>
      db.transaction(() => {
        for (const chunk of chunks) {
          const { lastInsertRowid } = insertChunk.run(documentId, chunk.chunkIndex);
          insertFts(lastInsertRowid, title, docPath, clean(chunk.text));
        }
      }).immediate(),
    );
  }

  /** The staged document takes the old version's place, in one transaction. */
  async commitStaged(collectionId: string, documentId: string, doc: DocumentHeader, chunkCount: number): Promise<void> {
    const db = this.database(collectionId, true)!;
    const findOld = db.prepare("SELECT id FROM documents WHERE source_id = ? AND path = ?").pluck();
    this.guarded(collectionId, () =>
      db.transaction(() => {
        const old = findOld.get(doc.sourceId, doc.path) as string | undefined;
        if (old !== undefined) deleteDocument(db, old);
        db.prepare(
          `INSERT INTO documents (id, source_id, path, title, size, modified_at, version, chunk_count, indexed_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        ).run(documentId, doc.sourceId, doc.path, doc.title, doc.size, doc.modifiedAt.getTime(), doc.version, chunkCount, Date.now());
      }).immediate(),
    );
  }

  async discardStaged(collectionId: string, documentId: string): Promise<void> {
    const db = this.database(collectionId, false);
    if (!db) return;
    this.guarded(collectionId, () => db.transaction(() => deleteDocument(db, documentId)).immediate());
  }

  async removeUnfinished(collectionId: string): Promise<void> {
    const db = this.database(collectionId, false);
    const orphans = "SELECT rowid FROM chunks WHERE document_id NOT IN (SELECT id FROM documents)";
    if (!db) return;
    this.guarded(collectionId, () => {
      // Read first: most jobs find nothing, and need not take the write lock for it.
      if (db.prepare(`${orphans} LIMIT 1`).get() === undefined) return;
      db.transaction(() => {
        db.prepare(`DELETE FROM chunks_fts WHERE rowid IN (${orphans})`).run();
        db.prepare(`DELETE FROM chunks_exact WHERE rowid IN (${orphans})`).run();
        db.prepare(`DELETE FROM chunks WHERE rowid IN (${orphans})`).run();
      }).immediate();
    });
  }

  async removeDocuments(collectionId: string, sourceId: string, paths: string[]): Promise<void> {
    const db = this.database(collectionId, false);
    if (!db || paths.length === 0) return;
    this.guarded(collectionId, () => removeByPath(db, sourceId, paths));
  }

  async indexedState(collectionId: string, sourceId: string): Promise<Map<string, IndexedState>> {
    const db = this.database(collectionId, false);
    return db ? this.guarded(collectionId, () => readIndexedState(db, sourceId)) : new Map();
  }

  async listDocuments(collectionId: string, offset: number, limit: number): Promise<{ total: number; items: DocumentSummary[] }> {
    const db = this.database(collectionId, false);
    return db ? this.guarded(collectionId, () => listPage(db, offset, limit)) : { total: 0, items: [] };
  }

  /** Counts, or indexStatus "damaged" (and no counts) for a file that cannot be read: a listing of collections must not fail for one. */
  async stats(collectionId: string): Promise<CollectionStats> {
    try {
      const db = this.database(collectionId, false);
      return db ? this.guarded(collectionId, () => countDocuments(db)) : { documentCount: 0, chunkCount: 0, indexStatus: "ok" };
    } catch (error) {
      if (error instanceof IndexDamagedError) return { documentCount: 0, chunkCount: 0, indexStatus: "damaged" };
      throw error;
    }
  }

  async search(collectionId: string, query: string, topK: number, options: SearchOptions = {}): Promise<SearchHit[]> {
    const units = parseQuery(query);
    if (units.length === 0) return [];
    const db = this.database(collectionId, false);
    return db ? this.guarded(collectionId, () => searchFile(db, units, topK, options)) : [];
  }

  /**
   * What a cached search result is valid for (search-result-cache.ts): the file's `PRAGMA
   * data_version` on this connection, which changes whenever another connection (thread or
   * process) commits to it, with the file's identity, size and modification time, which change
   * when it is replaced, truncated or overwritten behind SQLite's back. null without a file.
   */
  dataVersion(collectionId: string): string | null {
    const db = this.database(collectionId, false);
    if (!db) return null;
    let statement = this.versionStatements.get(db);
    if (!statement) {
      statement = db.prepare("PRAGMA data_version").pluck();
      this.versionStatements.set(db, statement);
    }
    const read = statement;
    const version = this.guarded(collectionId, () => read.get() as number);
    const file = fs.statSync(this.filePath(collectionId), { throwIfNoEntry: false });
    return file ? `${version}:${file.ino}:${file.size}:${file.mtimeMs}` : null;
  }

  async documentChunks(collectionId: string, documentId: string): Promise<ChunkInput[]> {
    const db = this.database(collectionId, false);
    if (!db) return [];
    const sql = "SELECT c.chunk_index AS chunkIndex, f.body AS text FROM chunks c JOIN chunks_fts f ON f.rowid = c.rowid WHERE c.document_id = ? ORDER BY c.chunk_index";
    return this.guarded(collectionId, () => db.prepare(sql).all(documentId) as ChunkInput[]);
  }

  async chunkTexts(collectionId: string, chunks: ChunkKey[]): Promise<Array<string | null>> {
    const db = this.database(collectionId, false);
    if (!db || chunks.length === 0) return chunks.map(() => null);
    const read = db.prepare("SELECT f.body FROM chunks c JOIN chunks_fts f ON f.rowid = c.rowid WHERE c.document_id = ? AND c.chunk_index = ?").pluck();
    return this.guarded(collectionId, () => chunks.map((chunk) => (read.get(chunk.documentId, chunk.chunkIndex) as string | undefined) ?? null));
  }

  async drop(collectionId: string): Promise<void> {
    const file = this.filePath(collectionId);
    await this.release(collectionId);
    for (const suffix of ["", "-wal", "-shm", "-journal"]) fs.rmSync(file + suffix, { force: true });
  }

  /** Closes this process's connection to one collection's file (another thread is about to delete or move it) and forgets its damage. */
  async release(collectionId: string): Promise<void> {
    const file = this.filePath(collectionId);
    const db = this.open.get(file);
    this.damaged.delete(file);
    if (db) {
      this.open.delete(file);
      db.close();
    }
  }

  /** Records a collection's file as damaged (found so by another thread), closing it here. */
  async markDamaged(collectionId: string): Promise<void> {
    await this.release(collectionId);
    this.damaged.add(this.filePath(collectionId));
  }

  /**
   * Sets a damaged file aside as `<id>.damaged-<time>.db` (kept for the user or support, never
   * deleted), so the next write starts a fresh file. Answers the new path, or null without a file.
   */
  async moveAside(collectionId: string): Promise<string | null> {
    const file = this.filePath(collectionId);
    await this.release(collectionId);
    if (!fs.existsSync(file)) return null;
    const aside = file.replace(/\.db$/, `.damaged-${new Date().toISOString().replace(/[:.]/g, "-")}.db`);
    fs.renameSync(file, aside);
    if (fs.existsSync(`${file}-wal`)) fs.renameSync(`${file}-wal`, `${aside}-wal`);
    for (const suffix of ["-shm", "-journal"]) fs.rmSync(file + suffix, { force: true });
    return aside;
  }

  async close(): Promise<void> {
    for (const db of this.open.values()) db.close();
    this.open.clear();
  }

  /** Opens a collection's file if it has one, bringing an older schema up to date (read-only readers cannot). */
  async upgrade(collectionId: string): Promise<void> {
    this.database(collectionId, false);
  }

  /** Merges each index's b-trees into one; worth it after a bulk load. */
  async optimize(collectionId: string): Promise<void> {
    const db = this.database(collectionId, false);
    if (!db) return;
    db.prepare("INSERT INTO chunks_fts (chunks_fts) VALUES ('optimize')").run();
    db.prepare("INSERT INTO chunks_exact (chunks_exact) VALUES ('optimize')").run();
  }

  /**
   * A read-only connection, beside the writer's (WAL lets readers and one writer work at once).
   * A file the writer has not finished creating (no schema committed yet) counts as empty, and
   * is looked at again next time: only a file with its schema in place is kept open.
   */
  private openReadOnly(file: string): Database.Database | undefined {
    if (!fs.existsSync(file)) return undefined;
    let db: Database.Database | undefined;
    try {
      db = new Database(file, { readonly: true, fileMustExist: true, nativeBinding: sqliteNativeBinding() });
      db.pragma("busy_timeout = 5000");
      const version = db.pragma("user_version", { simple: true }) as number;
      if (version > SCHEMA_VERSION) throw new Error(`Search index ${file} has schema version ${version}, newer than this build (${SCHEMA_VERSION})`);
      if (version < SCHEMA_VERSION) {
        db.close();
        return undefined;
      }
      if (this.checkOnOpen) {
        // The thread that checks files at open (the main thread) reads little afterwards.
        db.pragma(`cache_size = -${SMALL_CACHE_KIB}`);
        assertSound(db);
      }
    } catch (err) {
      db?.close();
      if (!isCorruption(err)) throw err;
      this.damaged.add(file);
      throw new IndexDamagedError();
    }
    this.open.set(file, db);
    return db;
  }

  /** The file of one collection, e.g. for reporting its size. */
  filePath(collectionId: string): string {
    if (!UUID.test(collectionId)) throw new NotFoundError("Collection not found");
    return path.join(this.dir, `${collectionId.toLowerCase()}.db`);
  }

  /**
   * The open database of a collection; without `create`, undefined when it has no file yet.
   * An existing file is checked once as it is opened (quick_check reads every page but skips
   * the index cross-checks of integrity_check), never per request.
   */
  private database(collectionId: string, create: boolean): Database.Database | undefined {
    const file = this.filePath(collectionId);
    const cached = this.open.get(file);
    if (cached) return cached;
    if (this.damaged.has(file)) throw new IndexDamagedError();
    if (this.readOnly) return this.openReadOnly(file);
    const existed = fs.existsSync(file);
    if (!create && !existed) return undefined;
    fs.mkdirSync(this.dir, { recursive: true });
    let db: Database.Database | undefined;
    try {
      db = new Database(file, { nativeBinding: sqliteNativeBinding() });
      // The busy timeout first: switching a new file to WAL takes a lock a reader may hold for a moment.
      db.pragma("busy_timeout = 5000");
      switchToWal(db);
      db.pragma("synchronous = NORMAL");
      db.pragma(`cache_size = -${SMALL_CACHE_KIB}`);
      if (existed) assertSound(db);
      migrate(db);
    } catch (err) {
      db?.close();
      if (!isCorruption(err)) throw err;
      this.damaged.add(file);
      throw new IndexDamagedError();
    }
    this.open.set(file, db);
    return db;
  }

  /** Runs statements on an open file; a corruption error marks the collection damaged (a file damaged while open). */
  private guarded<T>(collectionId: string, work: () => T): T {
    try {
      return work();
    } catch (error) {
      if (!isCorruption(error)) throw error;
      const file = this.filePath(collectionId);
      this.open.get(file)?.close();
      this.open.delete(file);
      this.damaged.add(file);
      throw new IndexDamagedError();
    }
  }
}

/** A file quick_check finds unsound fails as SQLite's own corruption error would. */
function assertSound(db: Database.Database): void {
  if (db.pragma("quick_check", { simple: true }) !== "ok") throw Object.assign(new Error("quick_check failed"), { code: "SQLITE_CORRUPT" });
  // The check read every page of the file; none of them is needed in the cache now.
  db.pragma("shrink_memory");
}

/**
 * Brings a file to SCHEMA_VERSION. The version read before the transaction only spares an
 * up-to-date file the write lock; it is read again under the lock (BEGIN IMMEDIATE), since
 * another connection may have created the schema in between.
 */
/**
 * Puts a file in WAL mode. On a new file still in rollback mode, two connections switching at
 * once can deadlock on the lock upgrade; SQLite then answers one of them SQLITE_BUSY at once,
 * without the busy timeout. That one waits a moment and tries again: the other's switch is quick.
 */
function switchToWal(db: Database.Database): void {
  for (let attempt = 1; ; attempt++) {
    try {
      db.pragma("journal_mode = WAL");
      return;
    } catch (error) {
      if ((error as { code?: string }).code !== "SQLITE_BUSY" || attempt >= WAL_SWITCH_ATTEMPTS) throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10 * attempt);
    }
  }
}

/** How often a busy WAL switch is tried before its error stands (about 2 s in all). */
const WAL_SWITCH_ATTEMPTS = 20;

function migrate(db: Database.Database): void {
  const newer = (version: number) => new Error(`Search index ${db.name} has schema version ${version}, newer than this build (${SCHEMA_VERSION})`);
  const seen = db.pragma("user_version", { simple: true }) as number;
  if (seen > SCHEMA_VERSION) throw newer(seen);
  if (seen === SCHEMA_VERSION) return;
  db.transaction(() => {
    // Read again under the write lock: another connection may have created or upgraded the file meanwhile.
    const current = db.pragma("user_version", { simple: true }) as number;
    if (current > SCHEMA_VERSION) throw newer(current);
    for (let version = current + 1; version <= SCHEMA_VERSION; version++) db.exec(SQLITE_INDEX_MIGRATIONS[version]);
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
  }).immediate();
}

/** Writes one chunk's text into both full-text tables under the chunk's rowid. */
function chunkInserter(db: Database.Database): (rowid: number | bigint, title: string, path: string, body: string) => void {
  const stemmed = db.prepare("INSERT INTO chunks_fts (rowid, title, path, body) VALUES (?, ?, ?, ?)");
  const exact = db.prepare("INSERT INTO chunks_exact (rowid, title, path, body) VALUES (?, ?, ?, ?)");
  return (rowid, title, path, body) => {
    stemmed.run(rowid, title, path, body);
    exact.run(rowid, title, path, body);
  };
}

function deleteDocument(db: Database.Database, documentId: string): void {
  db.prepare("DELETE FROM chunks_fts WHERE rowid IN (SELECT rowid FROM chunks WHERE document_id = ?)").run(documentId);
  db.prepare("DELETE FROM chunks_exact WHERE rowid IN (SELECT rowid FROM chunks WHERE document_id = ?)").run(documentId);
  db.prepare("DELETE FROM chunks WHERE document_id = ?").run(documentId);
  db.prepare("DELETE FROM documents WHERE id = ?").run(documentId);
}

function removeByPath(db: Database.Database, sourceId: string, paths: string[]): void {
  const find = db.prepare("SELECT id FROM documents WHERE source_id = ? AND path = ?").pluck();
  db.transaction(() => {
    for (const p of paths) {
      const id = find.get(sourceId, p) as string | undefined;
      if (id !== undefined) deleteDocument(db, id);
    }
  }).immediate();
}

function readIndexedState(db: Database.Database, sourceId: string): Map<string, IndexedState> {
  const state = new Map<string, IndexedState>();
  const rows = db.prepare("SELECT path, size, modified_at, version FROM documents WHERE source_id = ?").iterate(sourceId) as Iterable<
    Pick<DocumentRow, "path" | "size" | "modified_at" | "version">
  >;
  for (const row of rows) {
    state.set(row.path, { size: row.size, modifiedAt: new Date(row.modified_at), version: row.version });
  }
  return state;
}

function listPage(db: Database.Database, offset: number, limit: number): { total: number; items: DocumentSummary[] } {
  const total = db.prepare("SELECT count(*) FROM documents").pluck().get() as number;
  const rows = db
    .prepare("SELECT * FROM documents ORDER BY path, source_id LIMIT ? OFFSET ?")
    .all(Math.max(0, Math.floor(limit)), Math.max(0, Math.floor(offset))) as DocumentRow[];
  return { total, items: rows.map(toSummary) };
}

function countDocuments(db: Database.Database): CollectionStats {
  const row = db.prepare("SELECT count(*) AS documents, coalesce(sum(chunk_count), 0) AS chunks FROM documents").get() as {
    documents: number;
    chunks: number;
  };
  return { documentCount: row.documents, chunkCount: row.chunks, indexStatus: "ok" };
}

function searchFile(db: Database.Database, units: QueryUnit[], topK: number, options: SearchOptions): SearchHit[] {
  const limit = clampTopK(topK);
  const where = filterSql(options);
  let match = "";
  let top: (RankedRow & { exact: boolean })[] = [];
  let matched: SearchHit["matched"] = "all";
  for (const attempt of matchAttempts(units)) {
    match = toMatch(units, attempt.joiner, attempt.prefix);
    matched = attempt.matched;
    // Chunks with every word in the very form typed come first; when they fill the page, the
    // stemmed ranking is not even run (a common word's exact form usually does).
    const exact = rankedChunks(db, match, limit, where, options.perDocument, toMatch(units, attempt.joiner, attempt.prefix, true));
    const seen = new Set(exact.map((row) => row.rowid));
    const stemmed = exact.length < limit ? rankedChunks(db, match, limit + exact.length, where, options.perDocument).filter((row) => !seen.has(row.rowid)) : [];
    const tiers = [...exact.map((row) => ({ ...row, exact: true })), ...stemmed.map((row) => ({ ...row, exact: false }))];
    top = capPerDocument(tiers, options.perDocument, (row) => row.document_id!).slice(0, limit);
    if (top.length > 0) break;
  }
  // snippet() runs only for the chunks kept, not for every match the ranking looked at.
  const snippet = db.prepare(
    `SELECT snippet(chunks_fts, 2, '${MARK_OPEN}', '${MARK_CLOSE}', '…', ${SNIPPET_TOKENS}) AS snippet, body
     FROM chunks_fts WHERE chunks_fts MATCH ? AND rowid = ?`,
  );
  const ref = db.prepare(
    `SELECT c.document_id, c.chunk_index, d.source_id, d.path, d.title
     FROM chunks c JOIN documents d ON d.id = c.document_id WHERE c.rowid = ?`,
  );
  const hits: SearchHit[] = [];
  for (const { rowid, bm25, exact } of top) {
    const chunk = ref.get(rowid) as ChunkRefRow | undefined;
    if (!chunk) continue;
    // The rowid goes in as a BigInt (an SQLite integer): better-sqlite3 binds a JS number as
    // a REAL, and FTS5 ignores a `rowid = REAL` constraint, answering every match's first row.
    const found = snippet.get(match, BigInt(rowid)) as { snippet: string | null; body: string | null } | undefined;
    hits.push({
      documentId: chunk.document_id,
      sourceId: chunk.source_id,
      path: chunk.path,
      title: chunk.title,
      chunkIndex: chunk.chunk_index,
      snippet: markSnippet(found?.snippet ?? ""),
      text: found?.body ?? "",
      score: -bm25,
      exact,
      matched,
    });
  }
  return hits;
}

/** A filter as SQL over the chunk's rowid (`chunks_fts.rowid`), with its parameters; null without one. */
function filterSql(filter: SearchFilter): { sql: string; params: string[] } | null {
  const conditions: string[] = [];
  const params: string[] = [];
  if (filter.types?.length) {
    // Extensions are letters and digits only (the route checks), so they hold no LIKE wildcard.
    conditions.push(`(${filter.types.map(() => "d.path LIKE ?").join(" OR ")})`);
    params.push(...filter.types.map((type) => `%.${type}`));
  }
  if (filter.folder) {
    const prefix = folderPrefix(filter.folder);
    conditions.push(`substr(d.path, 1, ${prefix.length}) = ?`);
    params.push(prefix);
  }
  if (conditions.length === 0) return null;
  return {
    sql: `EXISTS (SELECT 1 FROM chunks c JOIN documents d ON d.id = c.document_id WHERE c.rowid = chunks_fts.rowid AND ${conditions.join(" AND ")})`,
    params,
  };
}

/**
 * The best chunks for a MATCH expression, best first, bm25 negative (lower is better); with
 * `exactMatch`, only chunks that match it in `chunks_exact` too (the words as typed). Past
 * RANK_WINDOW matches, only the newest are ranked.
 */
function rankedChunks(
  db: Database.Database,
  match: string,
  limit: number,
  where: { sql: string; params: string[] } | null,
  perDocument: number | undefined,
  exactMatch?: string,
): RankedRow[] {
  // The exact words' chunks, newest first: a set each stemmed match is checked against. The
  // unary + keeps SQLite from driving the query by it (one FTS5 lookup per exact rowid, each
  // re-reading the stemmed doclist: seconds for a common word).
  const exact = exactMatch === undefined ? "" : " AND +chunks_fts.rowid IN (SELECT rowid FROM chunks_exact WHERE chunks_exact MATCH ? ORDER BY rowid DESC LIMIT ?)";
  const exactArgs = exactMatch === undefined ? [] : [exactMatch, RANK_WINDOW];
  const filter = where ? ` AND ${where.sql}` : "";
  const filterArgs = where?.params ?? [];
  // Walking the doclist by rowid without scoring is cheap: it finds where the window starts.
  const floor = db
    .prepare(`SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?${exact}${filter} ORDER BY rowid DESC LIMIT 1 OFFSET ?`)
    .pluck()
    .get(match, ...exactArgs, ...filterArgs, RANK_WINDOW) as number | undefined;
  const conditions = `chunks_fts MATCH ?${floor === undefined ? "" : " AND chunks_fts.rowid > ?"}${exact}${filter}`;
  // The floor as a BigInt too, so FTS5 itself starts its doclist there (see the snippet query in searchFile()).
  const args = [match, ...(floor === undefined ? [] : [BigInt(floor)]), ...exactArgs, ...filterArgs];
  if (perDocument === undefined) {
    // ORDER BY bm25() uses SQLite's top-k sorter, measured faster here than FTS5's ORDER BY rank.
    return db.prepare(`SELECT rowid, ${BM25} AS bm25 FROM chunks_fts WHERE ${conditions} ORDER BY bm25 LIMIT ?`).all(...args, limit) as RankedRow[];
  }
  // At most perDocument chunks of each document, so one long document cannot fill the page.
  return db
    .prepare(
      `SELECT rowid, bm25, document_id FROM (
         SELECT rowid, bm25, document_id, row_number() OVER (PARTITION BY document_id ORDER BY bm25) AS n FROM (
           SELECT chunks_fts.rowid AS rowid, ${BM25} AS bm25, c.document_id FROM chunks_fts JOIN chunks c ON c.rowid = chunks_fts.rowid WHERE ${conditions}
         )
       ) WHERE n <= ? ORDER BY bm25 LIMIT ?`,
    )
    .all(...args, perDocument, limit) as RankedRow[];
}

/**
 * FTS5 MATCH text: every unit a quoted string (tokens cannot contain quotes), joined by AND
 * (space) or OR. For `chunks_exact` (no positions, so no phrases) a phrase's words are
 * required each on their own: the stemmed match beside it still asks for the phrase.
 */
function toMatch(units: QueryUnit[], joiner: " AND " | " OR ", prefix: boolean, wordsOnly = false): string {
  return units
    .map((u) => {
      const star = prefix && u.prefix ? "*" : "";
      if (!wordsOnly || u.tokens.length === 1) return `"${u.tokens.join(" ")}"${star}`;
      return `(${u.tokens.map((t, i) => `"${t}"${i === u.tokens.length - 1 ? star : ""}`).join(" AND ")})`;
    })
    .join(joiner);
}
