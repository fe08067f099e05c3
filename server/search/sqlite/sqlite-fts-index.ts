import crypto from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import Database from "better-sqlite3";
import { sqliteNativeBinding } from "../../data/sqlite-binding";
import { NotFoundError } from "../../errors";
import type { ChunkInput, ChunkKey, CollectionStats, DocumentHeader, DocumentInput, DocumentSummary, IndexedState, SearchFilter, SearchHit, SearchIndex, SearchOptions, StagedDocument } from "../search-index";
import { MARK_CLOSE, MARK_OPEN, UUID, capPerDocument, clampTopK, clean, folderPrefix, markSnippet, matchAttempts, parseQuery, spreadPerDocument, type MatchAttempt, type QueryUnit } from "../query";
import { toSummary, type DocumentRow } from "../document-row";
import { IndexDamagedError, isCorruption } from "../index-damage";
import { stagedDocument } from "../staged-document";


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
 * Layout of a file (schema version 4):
 * - `documents`: one row per (source_id, path).
 * - `chunks`: side table mapping an FTS rowid to (document_id, chunk_index).
 * - `chunks_fts`: FTS5 over (title, path, body), porter stemming over unicode61 with
 *   diacritics removed, so "cafe" finds "café" and "run" finds "running".
 * - `chunks_exact` (since 2): the same text without stemming, contentless, same rowids: the
 *   chunks with the words in the very form typed, ranked by its own bm25, so a file is found by
 *   its own rare words even when their stem is common ("highlighter" among 190 files saying
 *   "highlight"). Since 3 with positions (`detail=full`): bm25 needs them (it answers 0 on
 *   `detail=none`), and ranking this table alone is what keeps the exact tier cheap.
 *
 * - Since 4, both full-text tables keep a larger buffer of pending terms (FTS_HASH_BYTES).
 * - A file made by this build has 16 KB pages (NEW_FILE_PAGE_BYTES), an older one keeps 4 KB:
 *   the page size is not part of the schema version.
 *
 * A file of an older version is upgraded when it is opened (version 1 → 2 fills
 * `chunks_exact` from the stored text, 2 → 3 makes it again with positions, 3 → 4 sets the
 * buffer size, which changes no row; each in one transaction).
 */

const SCHEMA_VERSION = 4;

/**
 * FTS5's in-memory buffer of pending terms per table ('hashsize', stored in the file, so every
 * connection uses it; SQLite's default is 1 MB). A transaction's terms are written out as a new
 * segment whenever the buffer fills and at commit, and segments are merged as they pile up:
 * with 1 MB, one bench batch of 64 documents (830 chunks) filled it about twice, and the flushes,
 * their sorts and the merges were most of the writer's time. 8 MB holds a group-committed batch
 * (batched-index-writer.ts: up to 256 documents) as one segment; the memory is taken only while
 * a transaction is open and given back at commit.
 */
const FTS_HASH_BYTES = 8 * 1024 * 1024;

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
  3: `
    DROP TABLE chunks_exact;
    CREATE VIRTUAL TABLE chunks_exact USING fts5(
      title, path, body,
      content = '', contentless_delete = 1,
      tokenize = 'unicode61 remove_diacritics 2'
    );
    INSERT INTO chunks_exact (rowid, title, path, body) SELECT rowid, title, path, body FROM chunks_fts;
  `,
  4: `
    INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('hashsize', ${FTS_HASH_BYTES});
    INSERT INTO chunks_exact (chunks_exact, rank) VALUES ('hashsize', ${FTS_HASH_BYTES});
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

/**
 * The page size of a new file (SQLite's default is 4 KB). Bulk-writing the bench corpus took
 * the writer ~6 % less CPU with 16 KB pages, nearly all of it at commit (fewer, larger pages to
 * write to the WAL and back at the checkpoint; the file's size is the same within 2 %). A file
 * keeps the page size it was made with (changing it takes a VACUUM, a rewrite of the whole
 * file), so older files stay at 4 KB and nothing needs upgrading: the pragma does nothing on a
 * file that already has pages.
 */
const NEW_FILE_PAGE_BYTES = 16 * 1024;

/**
 * The WAL is checkpointed at commit once it holds this much (SQLite counts pages: its default
 * of 1,000 is 4 MB of 4 KB pages). In bytes, so a 16 KB-page file's WAL does not grow to four
 * times the size (measured: 28 MB against 14.5 MB after the bench corpus's load); the writer's
 * CPU was the same either way.
 */
const WAL_CHECKPOINT_BYTES = 4 * 1000 * 1024;

/** bm25's column weights (title, path, body), the same for both tables: a title hit outweighs a body hit. */
const BM25_WEIGHTS = "5.0, 2.0, 1.0";
/**
 * How much work one search's ranking may do (rankedChunks(), rankPlan()); tests lower them to
 * reach the paths a big collection takes.
 */
export interface RankingLimits {
  /** The newest matches bm25 scores (~0.5 µs each, besides one walk of each word's doclist for its idf). */
  window: number;
  /** Collections from this many chunks (by rowid) leave words found in most chunks unscored; smaller ones are quick to score in full. */
  commonFrom: number;
  /** Newest matches read to estimate a word's share of the chunks. */
  commonSample: number;
}

/**
 * The window measured on the search bench (100,000 chunks, 500 queries; docs/decisions.md): its
 * top 10s agree with an unwindowed ranking's on 91.5 % of their chunks at 3,000 (97.5 % at
 * 10,000, 87.6 % at 2,000), at a p95 of ~5 ms against ~7 ms with 10,000.
 */
export const RANKING_LIMITS: RankingLimits = { window: 3_000, commonFrom: 20_000, commonSample: 200 };
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
  /** The ranking's work limits (RANKING_LIMITS unless a test lowers them). */
  ranking?: Partial<RankingLimits>;
  /**
   * Run `PRAGMA quick_check` when a read-only instance opens a file (a writable one always
   * does). threaded-index.ts does not: its writer thread checks each file at open, off the main
   * thread, before the main thread's connection reads it.
   */
  checkOnOpen?: boolean;
  /**
   * Keep SQLite's own 2 MB page cache on a read-only instance's connections (the writer's always
   * do): for a thread that reads little (the main thread's counts and first pages). Default:
   * checkOnOpen, whose check reads every page.
   */
  smallCache?: boolean;
}


interface RankedRow {
  rowid: number;
  bm25: number;
  /** Only with a per-document cap or firstPerDocument. */
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
  private readonly smallCache: boolean;
  private readonly ranking: RankingLimits;
  /** Files found damaged, by path: answered at once rather than re-read per request. */
  private readonly damaged = new Set<string>();
  /** A file another connection of this process found sound a moment ago (a search reader's check): its next open here skips quick_check. */
  private readonly checkedElsewhere = new Set<string>();
  /** Each open file's `PRAGMA data_version` statement (dataVersion()). */
  private readonly versionStatements = new WeakMap<Database.Database, Database.Statement>();

  constructor(options: SqliteFtsIndexOptions) {
    this.dir = options.dir;
    this.readOnly = options.readOnly ?? false;
    this.checkOnOpen = !this.readOnly || (options.checkOnOpen ?? false);
    this.smallCache = !this.readOnly || (options.smallCache ?? this.checkOnOpen);
    this.ranking = { ...RANKING_LIMITS, ...options.ranking };
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
    return db ? this.guarded(collectionId, () => searchFile(db, units, topK, options, this.ranking)) : [];
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

  /**
   * A read-only instance's look at a collection's file before its first read in this process:
   * "missing" (no file), "older" (a schema this build must migrate first, or none committed yet:
   * the writer's work), or "current" after `PRAGMA quick_check` found it sound. Throws
   * IndexDamagedError for a damaged file. Runs wherever the caller sends it (threaded-index.ts: a
   * search reader thread), as the check reads every page.
   */
  async check(collectionId: string): Promise<"missing" | "older" | "current"> {
    const file = this.filePath(collectionId);
    if (!fs.existsSync(file)) return "missing";
    const db = this.database(collectionId, false);
    if (!db) return "older";
    this.guarded(collectionId, () => assertSound(db));
    return "current";
  }

  /**
   * Collections whose files a reader thread of this process has just checked and found sound
   * (ThreadedSqliteIndex passes a job's collection to the writer as the job starts): opening one
   * to write skips its own quick_check, which would read every page again. Only the latest word
   * counts, so an old check is never trusted later; corruption found later is still caught.
   */
  trustChecked(collectionIds: string[]): void {
    this.checkedElsewhere.clear();
    for (const id of collectionIds) {
      const file = this.filePath(id);
      if (!this.open.has(file)) this.checkedElsewhere.add(file);
    }
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
      if (this.smallCache) db.pragma(`cache_size = -${SMALL_CACHE_KIB}`);
      if (this.checkOnOpen) assertSound(db);
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
      // Before the WAL switch, which writes the new file's first page.
      db.pragma(`page_size = ${NEW_FILE_PAGE_BYTES}`);
      switchToWal(db);
      db.pragma("synchronous = NORMAL");
      db.pragma(`cache_size = -${SMALL_CACHE_KIB}`);
      db.pragma(`wal_autocheckpoint = ${WAL_CHECKPOINT_BYTES / (db.pragma("page_size", { simple: true }) as number)}`);
      if (existed && !this.checkedElsewhere.delete(file)) assertSound(db);
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

/** How many times a page's rows spreadPerDocument is first tried on (windowedChunks); past that the whole window is numbered. */
const SPREAD_DEPTH = 4;

function searchFile(db: Database.Database, units: QueryUnit[], topK: number, options: SearchOptions, limits: RankingLimits): SearchHit[] {
  const limit = clampTopK(topK);
  const where = filterSql(options);
  // A hard cap leaves nothing to spread.
  const firstPerDocument = options.perDocument === undefined ? options.firstPerDocument : undefined;
  const scope: RankScope = { where, perDocument: options.perDocument, firstPerDocument, limits };
  let match = "";
  let prefixed = false;
  let top: (RankedRow & { exact: boolean })[] = [];
  let matched: SearchHit["matched"] = "all";
  for (const attempt of matchAttempts(units)) {
    // A prefix merges the doclists of every word it starts: not worth it when the other words have no chunk in common.
    if (attempt.prefix && units.length > 1 && !anyMatch(db, toMatch(units.slice(0, -1), attempt.joiner, false))) continue;
    match = toMatch(units, attempt.joiner, attempt.prefix);
    prefixed = attempt.prefix;
    matched = attempt.matched;
    const plan = (table: RankedTable) => rankPlan(db, table, units, attempt, limits);
    // Chunks with every word in the very form typed come first, ranked by chunks_exact alone;
    // when they fill the page, the stemmed ranking is not even run (a common word's exact form usually does).
    const exact = rankedChunks(db, "chunks_exact", plan("chunks_exact"), limit, scope);
    const seen = new Set(exact.map((row) => row.rowid));
    const stemmed =
      exact.length < limit && (options.perDocument !== undefined || hasMoreMatches(db, match, exact.length, where))
        ? rankedChunks(db, "chunks_fts", plan("chunks_fts"), limit + exact.length, scope).filter((row) => !seen.has(row.rowid))
        : [];
    // Each tier spread on its own (a no-op on one windowed ranking's rows, which come spread; it
    // orders rankings joined one after another, rankedChunks()'s fill and unscored parts).
    const spread = (rows: RankedRow[]) => spreadPerDocument(rows, firstPerDocument, (row) => row.document_id!);
    const tiers = [...spread(exact).map((row) => ({ ...row, exact: true })), ...spread(stemmed).map((row) => ({ ...row, exact: false }))];
    top = capPerDocument(tiers, options.perDocument, (row) => row.document_id!).slice(0, limit);
    if (top.length > 0) break;
  }
  const snippets = snippetsOf(db, match, top.map((row) => row.rowid), prefixed);
  const body = db.prepare("SELECT body FROM chunks_fts WHERE rowid = ?").pluck();
  const ref = db.prepare(
    `SELECT c.document_id, c.chunk_index, d.source_id, d.path, d.title
     FROM chunks c JOIN documents d ON d.id = c.document_id WHERE c.rowid = ?`,
  );
  const hits: SearchHit[] = [];
  for (const { rowid, bm25, exact } of top) {
    const chunk = ref.get(rowid) as ChunkRefRow | undefined;
    if (!chunk) continue;
    const found = snippets.get(rowid);
    // An exact prefix can find a word whose stem does not start with it ("highlighte" in
    // "highlighter", stem "highlight"): no stemmed match to mark, so the chunk's start stands in.
    const text = found?.body ?? ((body.get(BigInt(rowid)) as string | undefined) ?? "");
    hits.push({
      documentId: chunk.document_id,
      sourceId: chunk.source_id,
      path: chunk.path,
      title: chunk.title,
      chunkIndex: chunk.chunk_index,
      snippet: markSnippet(found?.snippet ?? chunkStart(text)),
      text,
      score: -bm25,
      exact,
      matched,
    });
  }
  return hits;
}

/**
 * The marked snippet and whole text of the chunks kept, by rowid; snippet() runs only for
 * them, not for every match the ranking looked at. One statement per chunk, each a seek to its
 * rowid; but FTS5 merges a prefix's doclists again for every statement (~3 ms each for a short
 * prefix at 100,000 chunks), so with a prefix one statement walks the rowids' range once and
 * keeps those asked for.
 */
function snippetsOf(db: Database.Database, match: string, rowids: number[], prefixed: boolean): Map<number, { snippet: string | null; body: string | null }> {
  const found = new Map<number, { snippet: string | null; body: string | null }>();
  if (rowids.length === 0) return found;
  const columns = `rowid, snippet(chunks_fts, 2, '${MARK_OPEN}', '${MARK_CLOSE}', '…', ${SNIPPET_TOKENS}) AS snippet, body`;
  type Row = { rowid: number; snippet: string | null; body: string | null };
  if (prefixed) {
    // The unary + leaves the list a filter: FTS5 walks the range once instead of seeking (and merging) per rowid.
    const sql = `SELECT ${columns} FROM chunks_fts WHERE chunks_fts MATCH ? AND rowid BETWEEN ? AND ? AND +rowid IN (${rowids.map(() => "?").join(", ")})`;
    const rows = db.prepare(sql).all(match, BigInt(Math.min(...rowids)), BigInt(Math.max(...rowids)), ...rowids.map(BigInt)) as Row[];
    for (const row of rows) found.set(row.rowid, row);
    return found;
  }
  // The rowid goes in as a BigInt (an SQLite integer): better-sqlite3 binds a JS number as
  // a REAL, and FTS5 ignores a `rowid = REAL` constraint, answering every match's first row.
  const one = db.prepare(`SELECT ${columns} FROM chunks_fts WHERE chunks_fts MATCH ? AND rowid = ?`);
  for (const rowid of rowids) {
    const row = one.get(match, BigInt(rowid)) as Row | undefined;
    if (row) found.set(rowid, row);
  }
  return found;
}

/** The first SNIPPET_TOKENS words of a chunk, for a hit with nothing to mark. */
function chunkStart(text: string): string {
  const words = text.split(/\s+/).filter(Boolean);
  return words.length > SNIPPET_TOKENS ? `${words.slice(0, SNIPPET_TOKENS).join(" ")}…` : words.join(" ");
}

/**
 * Whether more than `count` chunks match by stem (with the filter): when not, the exact tier
 * already holds every one of them (every exact match is a stem match; uncapped, it held all of
 * its own), and the stemmed ranking is not run. Stops after count + 1 (a prefix's doclists are
 * merged for it, but a ranking merges them twice: once to match, once for bm25's idf).
 */
function hasMoreMatches(db: Database.Database, match: string, count: number, where: SqlFilter | null): boolean {
  const filter = where ? ` AND ${where.sql("chunks_fts")}` : "";
  const sql = `SELECT count(*) FROM (SELECT 1 FROM chunks_fts WHERE chunks_fts MATCH @match${filter} LIMIT @enough)`;
  return (db.prepare(sql).pluck().get({ match, enough: count + 1, ...where?.params }) as number) > count;
}

/** Whether any chunk matches (stemmed): stops at the first. */
function anyMatch(db: Database.Database, match: string): boolean {
  return db.prepare("SELECT 1 FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT 1").get(match) !== undefined;
}

/** The two full-text tables a search ranks: the exact forms and the stems, each with its bm25 weighted alike (title, path, body). */
type RankedTable = "chunks_exact" | "chunks_fts";

/** A filter as SQL over the chunk's rowid (`<table>.rowid`), with its named parameters (`@filter0`, ...); null without one. */
function filterSql(filter: SearchFilter): SqlFilter | null {
  const conditions: string[] = [];
  const params: Record<string, string> = {};
  const param = (value: string) => {
    const name = `filter${Object.keys(params).length}`;
    params[name] = value;
    return `@${name}`;
  };
  if (filter.types?.length) {
    // Extensions are letters and digits only (the route checks), so they hold no LIKE wildcard.
    conditions.push(`(${filter.types.map((type) => `d.path LIKE ${param(`%.${type}`)}`).join(" OR ")})`);
  }
  if (filter.folder) {
    const prefix = folderPrefix(filter.folder);
    conditions.push(`substr(d.path, 1, ${prefix.length}) = ${param(prefix)}`);
  }
  if (conditions.length === 0) return null;
  return {
    sql: (table) => `EXISTS (SELECT 1 FROM chunks c JOIN documents d ON d.id = c.document_id WHERE c.rowid = ${table}.rowid AND ${conditions.join(" AND ")})`,
    params,
  };
}

interface SqlFilter {
  sql: (table: RankedTable) => string;
  params: Record<string, string>;
}

/** What every ranking of one search shares: its filter, its per-document cap or spread (SearchOptions) and its work limits. */
interface RankScope {
  where: SqlFilter | null;
  perDocument: number | undefined;
  firstPerDocument: number | undefined;
  limits: RankingLimits;
}

/**
 * What one table's ranking asks: the chunks matching `match`, scored by bm25 over the units of
 * `rank` only; with `rank` null, not scored (every unit is in most chunks, rankedChunks()).
 * `fill`: when the ranking finds fewer than asked, unscored chunks of this wider match follow.
 */
interface RankPlan {
  match: string;
  rank: string | null;
  fill: string | null;
}

/**
 * Leaves out of the bm25 the units found in most chunks of a big collection. bm25 reads each
 * unit's whole doclist once per query for its idf (~3 ms per 100,000 chunks for a word in
 * all of them), and past half of the chunks that idf is clamped to ~0 (FTS5: log((N - n + 0.5)
 * / (n + 0.5)) <= 0), so such a unit adds nothing to any score. In an AND it still filters,
 * but is not scored; in an OR the other units are ranked, and chunks with only the common ones
 * follow unscored. A unit's share is estimated from its newest `commonSample` matches (a
 * bounded walk); never for the prefix unit (any walk of a prefix merges the doclists of every
 * word it starts).
 */
function rankPlan(db: Database.Database, table: RankedTable, units: QueryUnit[], attempt: MatchAttempt, limits: RankingLimits): RankPlan {
  const match = toMatch(units, attempt.joiner, attempt.prefix);
  const whole: RankPlan = { match, rank: match, fill: null };
  const newest = db.prepare("SELECT max(rowid) FROM chunks").pluck().get() as number | null;
  if (newest === null || newest < limits.commonFrom) return whole;
  const sample = db.prepare(`SELECT count(*) AS n, min(rowid) AS oldest FROM (SELECT rowid FROM ${table} WHERE ${table} MATCH ? ORDER BY rowid DESC LIMIT ?)`);
  const common = units.map((unit) => {
    if (attempt.prefix && unit.prefix) return false;
    const { n, oldest } = sample.get(toMatch([unit], attempt.joiner, false), limits.commonSample) as { n: number; oldest: number | null };
    return n === limits.commonSample && oldest !== null && n / (newest - oldest + 1) > COMMON_SHARE;
  });
  if (!common.includes(true)) return whole;
  const scored = units.filter((_, i) => !common[i]);
  const rank = scored.length === 0 ? null : toMatch(scored, attempt.joiner, attempt.prefix);
  if (attempt.joiner === " AND ") return { match, rank, fill: null };
  return rank === null ? { match, rank: null, fill: null } : { match: rank, rank, fill: match };
}

/** The share of the chunks from which bm25's idf is clamped to ~0. */
const COMMON_SHARE = 0.5;
/** Scores of an unscored ranking (every unit in most chunks): a title hit above a path or body hit, as bm25's weights would put it. */
const UNSCORED_TITLE = -5e-6;
const UNSCORED_OTHER = -1e-6;

/**
 * The best chunks of one table for a plan, best first, bm25 negative (lower is better), within
 * the window (windowedChunks()). A plan without scored units (every word is
 * in most chunks, so bm25 would say almost nothing at the cost of reading every doclist):
 * the newest chunks with the words in their title, then the newest others.
 */
function rankedChunks(
  db: Database.Database,
  table: RankedTable,
  plan: RankPlan,
  limit: number,
  scope: RankScope,
): RankedRow[] {
  const ranked =
    plan.rank === null
      ? unscoredChunks(db, table, plan.match, limit, scope)
      : windowedChunks(db, table, { match: plan.rank, also: plan.rank === plan.match ? null : plan.match, score: `bm25(${table}, ${BM25_WEIGHTS})` }, limit, scope);
  if (ranked.length >= limit || plan.fill === null) return ranked;
  const seen = new Set(ranked.map((row) => row.rowid));
  return [...ranked, ...unscoredChunks(db, table, plan.fill, limit + ranked.length, scope).filter((row) => !seen.has(row.rowid))].slice(0, limit);
}

/** The newest chunks matching with the words in their title, then the newest others (scored UNSCORED_TITLE, UNSCORED_OTHER). */
function unscoredChunks(db: Database.Database, table: RankedTable, match: string, limit: number, scope: RankScope): RankedRow[] {
  const titled = windowedChunks(db, table, { match: `title : (${match})`, also: null, score: String(UNSCORED_TITLE) }, limit, scope);
  if (titled.length >= limit) return titled;
  const seen = new Set(titled.map((row) => row.rowid));
  const rest = windowedChunks(db, table, { match, also: null, score: String(UNSCORED_OTHER) }, limit + titled.length, scope);
  return [...titled, ...rest.filter((row) => !seen.has(row.rowid))].slice(0, limit);
}

/** One windowed ranking: what must match, what else must (a set the same table answers whole, or null), and the score. */
interface WindowedQuery {
  match: string;
  also: string | null;
  score: string;
}

/**
 * The chunks matching `match` (and `also`), scored by `score`, best first (ties: newest first).
 * Past `window` matches, only the newest `window` are scored. One pass over the matches,
 * newest first (FTS5 walks its doclist in rowid order itself), that stops at the window and
 * scores only the rows it keeps; no separate walk to find where the window starts, which for
 * a prefix or an OR would merge their doclists once more.
 */
function windowedChunks(db: Database.Database, table: RankedTable, query: WindowedQuery, limit: number, scope: RankScope): RankedRow[] {
  if (query.also !== null) {
    const checked = checkedAlso(db, table, { ...query, also: query.also }, limit, scope);
    if (checked) return checked;
  }
  const filter = scope.where ? ` AND ${scope.where.sql(table)}` : "";
  const newest = (columns: string, match: string, conditions: string) =>
    `SELECT ${columns} FROM ${table} WHERE ${table} MATCH ${match}${conditions} ORDER BY ${table}.rowid DESC LIMIT @window`;
  const scored = `${table}.rowid AS rowid, ${query.score} AS bm25`;
  // With `also`, its newest rows (with the filter) are the window, a set the scored match is
  // walked against: FTS5 finds them through `also` (an AND seeks past most of a common word's
  // doclist), and bm25 sees only the scored units. The unary + keeps the set a filter (the
  // scored match stays the outer loop, starting at the set's oldest rowid).
  const candidates =
    query.also === null
      ? `WITH candidates AS (${newest(scored, "@match", filter)})`
      : // MATERIALIZED: read twice (its oldest rowid and the set), the AND with the common word ran twice (measured at 1,000,000 chunks: 141 → 59 ms).
        `WITH also_window AS MATERIALIZED (${newest(`${table}.rowid AS rowid`, "@also", filter)}),
         candidates AS (${newest(scored, "@match", ` AND ${table}.rowid >= (SELECT min(rowid) FROM also_window) AND +${table}.rowid IN (SELECT rowid FROM also_window)`)})`;
  const params = { match: query.match, ...(query.also === null ? {} : { also: query.also }), ...scope.where?.params, window: scope.limits.window, limit };
  if (scope.perDocument === undefined && scope.firstPerDocument === undefined) {
    return db.prepare(`${candidates} SELECT rowid, bm25 FROM candidates ORDER BY bm25, rowid DESC LIMIT @limit`).all(params) as RankedRow[];
  }
  // Each chunk's rank n within its document: with perDocument, at most that many of each
  // document (one long document cannot fill the page); with firstPerDocument, a document's
  // chunks past that many after every other document's (none dropped).
  const numbered = `SELECT k.rowid, k.bm25, c.document_id, row_number() OVER (PARTITION BY c.document_id ORDER BY k.bm25, k.rowid DESC) AS n
         FROM candidates k JOIN chunks c ON c.rowid = k.rowid`;
  if (scope.perDocument !== undefined) {
    return db
      .prepare(`${candidates} SELECT rowid, bm25, document_id FROM (${numbered}) WHERE n <= @perDocument ORDER BY bm25, rowid DESC LIMIT @limit`)
      .all({ ...params, perDocument: scope.perDocument }) as RankedRow[];
  }
  // The spread page comes from the best SPREAD_DEPTH x limit rows when they hold `limit` rows that
  // are among their document's first firstPerDocument: any row below them ranks below every one of
  // them, and a row's rank within its document is the same among them as among all the
  // candidates. Only otherwise (one document holding most of the best rows) is every candidate
  // numbered (a join and a sort of up to the window; 2-3x a plain ranking's time).
  const best = db
    .prepare(`${candidates} SELECT k.rowid, k.bm25, c.document_id FROM (SELECT rowid, bm25 FROM candidates ORDER BY bm25, rowid DESC LIMIT @depth) k JOIN chunks c ON c.rowid = k.rowid ORDER BY k.bm25, k.rowid DESC`)
    .all({ ...params, depth: limit * SPREAD_DEPTH }) as RankedRow[];
  const documentOf = (row: RankedRow) => row.document_id!;
  const firsts = capPerDocument(best, scope.firstPerDocument, documentOf).length;
  if (firsts >= limit || best.length < limit * SPREAD_DEPTH) return spreadPerDocument(best, scope.firstPerDocument, documentOf).slice(0, limit);
  return db
    .prepare(`${candidates} SELECT rowid, bm25, document_id FROM (${numbered}) ORDER BY n > @firstPerDocument, bm25, rowid DESC LIMIT @limit`)
    .all({ ...params, firstPerDocument: scope.firstPerDocument }) as RankedRow[];
}

/**
 * windowedChunks() with `also` (units in most chunks, which filter but are not scored), when the
 * scored match has no more than `window` matches (with the filter): then the window is every one
 * of them that matches `also` too, so they are all ranked and `also` is checked only on the best,
 * in rank order, one rowid seek each, until `limit` pass (with a per-document cap, counting only
 * those that pass). Same rows, order and scores as the AND; but the AND seeks a common word's
 * doclist (a million entries at 1,000,000 chunks) for every match of the rarer words, and that
 * was most of such a search's time (docs/decisions.md). Answers null when the scored match has
 * more matches than the window: which are the newest that match `also` is then the AND's to find.
 */
function checkedAlso(db: Database.Database, table: RankedTable, query: WindowedQuery & { also: string }, limit: number, scope: RankScope): RankedRow[] | null {
  const filter = scope.where ? ` AND ${scope.where.sql(table)}` : "";
  const params = { match: query.match, ...scope.where?.params, window: scope.limits.window };
  const count = `SELECT count(*) FROM (SELECT 1 FROM ${table} WHERE ${table} MATCH @match${filter} LIMIT @window + 1)`;
  if ((db.prepare(count).pluck().get(params) as number) > scope.limits.window) return null;
  const documentOf = scope.perDocument === undefined ? "" : ", (SELECT c.document_id FROM chunks c WHERE c.rowid = k.rowid) AS document_id";
  const ranked = db
    .prepare(
      `WITH k AS (SELECT ${table}.rowid AS rowid, ${query.score} AS bm25 FROM ${table} WHERE ${table} MATCH @match${filter})
       SELECT rowid, bm25${documentOf} FROM k ORDER BY bm25, rowid DESC`,
    )
    .all(params) as RankedRow[];
  const also = db.prepare(`SELECT 1 FROM ${table} WHERE ${table} MATCH ? AND rowid = ?`);
  const perDocument = new Map<string, number>();
  const kept: RankedRow[] = [];
  for (const row of ranked) {
    const seen = row.document_id === undefined ? 0 : (perDocument.get(row.document_id) ?? 0);
    if (scope.perDocument !== undefined && seen >= scope.perDocument) continue;
    // A BigInt: FTS5 ignores a `rowid = REAL` constraint (see snippetsOf).
    if (also.get(query.also, BigInt(row.rowid)) === undefined) continue;
    if (row.document_id !== undefined) perDocument.set(row.document_id, seen + 1);
    kept.push(row);
    if (kept.length >= limit) break;
  }
  return kept;
}

/** FTS5 MATCH text: every unit a quoted string (tokens cannot contain quotes), joined by AND (space) or OR. */
function toMatch(units: QueryUnit[], joiner: " AND " | " OR ", prefix: boolean): string {
  return units.map((u) => `"${u.tokens.join(" ")}"${prefix && u.prefix ? "*" : ""}`).join(joiner);
}
