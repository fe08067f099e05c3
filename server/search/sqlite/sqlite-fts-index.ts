import crypto from "node:crypto";
import * as fs from "node:fs";
import type Database from "better-sqlite3";
import { IndexDamagedError } from "../index-damage";
import { parseQuery } from "../query";
import type {
  ChunkInput,
  ChunkKey,
  CollectionCountRequest,
  KeyedChunk,
  CollectionStats,
  DocumentHeader,
  DocumentInput,
  DocumentSummary,
  EmptyFile,
  IndexedState,
  PermissionsUpdate,
  ReadableFilter,
  SearchHit,
  SearchIndex,
  SearchOptions,
  StagedDocument,
  StoredAcl,
} from "../search-index";
import { aclVersion, readableDocumentIds, readAcls, writePermissions } from "./sqlite-fts-acls";
import { stagedDocument } from "../staged-document";
import { SqliteFtsFiles, type SettledFile } from "./sqlite-fts-files";
import { RANKING_LIMITS, type RankingLimits } from "./sqlite-fts-ranking";
import { countDocuments, listPage, readChunksByKey, readDocumentChunks, readIndexedState } from "./sqlite-fts-reads";
import { searchFile } from "./sqlite-fts-search";
import { commitStaged, discardDocument, hasOrphans, optimizeTables, removeByPath, removeOrphans, stageChunks, writeDocuments, writeEmptyMarks } from "./sqlite-fts-writes";

/**
 * The collection index on SQLite FTS5: one database file per collection (`<dir>/<id>.db`),
 * so writing one collection never takes the main database's write lock and dropping a
 * collection is deleting its file. Files are opened lazily and kept open until drop/close
 * (sqlite-fts-files.ts); their layout and upgrades are in sqlite-fts-schema.ts.
 *
 * A file SQLite cannot read (truncated, overwritten) marks its collection damaged: found by
 * `PRAGMA quick_check` when the file is opened, or by SQLITE_CORRUPT/NOTADB from any later
 * statement. A damaged collection answers IndexDamagedError (stats: indexStatus "damaged")
 * without touching the file again, until moveAside() sets the file aside for a rebuild.
 */

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
  /** Told of each quick_check run as a file is opened or first checked (tests observe the check this way). */
  onQuickCheck?: (file: string) => void;
}

export class SqliteFtsIndex implements SearchIndex {
  private readonly files: SqliteFtsFiles;
  private readonly ranking: RankingLimits;
  /** Each open file's `PRAGMA data_version` statement (dataVersion()). */
  private readonly versionStatements = new WeakMap<Database.Database, Database.Statement>();

  constructor(options: SqliteFtsIndexOptions) {
    const readOnly = options.readOnly ?? false;
    const checkOnOpen = !readOnly || (options.checkOnOpen ?? false);
    const smallCache = !readOnly || (options.smallCache ?? checkOnOpen);
    this.files = new SqliteFtsFiles({ dir: options.dir, readOnly, checkOnOpen, smallCache, onQuickCheck: options.onQuickCheck });
    this.ranking = { ...RANKING_LIMITS, ...options.ranking };
  }

  async upsertDocument(collectionId: string, doc: DocumentInput): Promise<string> {
    return (await this.upsertDocuments(collectionId, [doc]))[0];
  }

  /** One transaction for the whole batch (sqlite-fts-writes.ts). */
  async upsertDocuments(collectionId: string, docs: DocumentInput[]): Promise<string[]> {
    if (docs.length === 0) return [];
    const db = this.files.database(collectionId, true)!;
    this.files.noteWrite(collectionId);
    return this.files.guarded(collectionId, () => writeDocuments(db, docs));
  }

  /**
   * A staged document's chunks are rows without a `documents` row: searches skip them (a hit
   * is joined to its document) until commitStaged writes that row in place of the old one.
   */
  async stageDocument(collectionId: string, doc: DocumentHeader): Promise<StagedDocument> {
    this.files.database(collectionId, true);
    return stagedDocument(crypto.randomUUID(), {
      add: (id, chunks) => this.stageChunks(collectionId, id, doc, chunks),
      commit: (id, chunkCount) => this.commitStaged(collectionId, id, doc, chunkCount),
      discard: (id) => this.discardStaged(collectionId, id),
    });
  }

  /** One batch of a staged document's chunks, in one transaction. */
  async stageChunks(collectionId: string, documentId: string, doc: DocumentHeader, chunks: ChunkInput[]): Promise<void> {
    const db = this.files.database(collectionId, true)!;
    this.files.noteWrite(collectionId);
    this.files.guarded(collectionId, () => stageChunks(db, documentId, doc, chunks));
  }

  /** The staged document takes the old version's place, in one transaction. */
  async commitStaged(collectionId: string, documentId: string, doc: DocumentHeader, chunkCount: number): Promise<void> {
    const db = this.files.database(collectionId, true)!;
    this.files.noteWrite(collectionId);
    this.files.guarded(collectionId, () => commitStaged(db, documentId, doc, chunkCount));
  }

  async discardStaged(collectionId: string, documentId: string): Promise<void> {
    const db = this.files.database(collectionId, false);
    if (!db) return;
    this.files.noteWrite(collectionId);
    this.files.guarded(collectionId, () => discardDocument(db, documentId));
  }

  async removeUnfinished(collectionId: string): Promise<void> {
    const db = this.files.database(collectionId, false);
    if (!db || !this.files.guarded(collectionId, () => hasOrphans(db))) return;
    this.files.noteWrite(collectionId);
    this.files.guarded(collectionId, () => removeOrphans(db));
  }

  /**
   * An ingestion job's writes to the collection are over: a file written since the last settle
   * has its fragmented full-text tables optimized and is marked clean (SqliteFtsFiles.settle);
   * a no-change re-run wrote nothing and is left alone.
   */
  async settleWrites(collectionId: string): Promise<SettledFile> {
    return this.files.settle(collectionId);
  }

  async removeDocuments(collectionId: string, sourceId: string, paths: string[]): Promise<void> {
    const db = this.files.database(collectionId, false);
    if (!db || paths.length === 0) return;
    this.files.noteWrite(collectionId);
    this.files.guarded(collectionId, () => removeByPath(db, sourceId, paths));
  }

  async markEmpty(collectionId: string, sourceId: string, files: EmptyFile[]): Promise<void> {
    if (files.length === 0) return;
    const db = this.files.database(collectionId, true)!;
    this.files.noteWrite(collectionId);
    this.files.guarded(collectionId, () => writeEmptyMarks(db, sourceId, files));
  }

  async indexedState(collectionId: string, sourceId: string): Promise<Map<string, IndexedState>> {
    const db = this.files.database(collectionId, false);
    return db ? this.files.guarded(collectionId, () => readIndexedState(db, sourceId)) : new Map();
  }

  async listDocuments(collectionId: string, offset: number, limit: number, filter: ReadableFilter = {}): Promise<{ total: number; items: DocumentSummary[] }> {
    const db = this.files.database(collectionId, false);
    return db ? this.files.guarded(collectionId, () => listPage(db, offset, limit, filter)) : { total: 0, items: [] };
  }

  async updatePermissions(collectionId: string, sourceId: string, updates: PermissionsUpdate[]): Promise<void> {
    const db = this.files.database(collectionId, false);
    if (!db || updates.length === 0) return;
    this.files.noteWrite(collectionId);
    this.files.guarded(collectionId, () => writePermissions(db, sourceId, updates));
  }

  async acls(collectionId: string): Promise<{ version: string; acls: StoredAcl[] }> {
    const db = this.files.database(collectionId, false);
    return db ? this.files.guarded(collectionId, () => readAcls(db)) : { version: "none", acls: [] };
  }

  async aclVersion(collectionId: string): Promise<string> {
    const db = this.files.database(collectionId, false);
    return db ? this.files.guarded(collectionId, () => aclVersion(db)) : "none";
  }

  /** One file per collection: one read each, in this one call (no round trip between them). */
  async aclVersions(collectionIds: readonly string[]): Promise<string[]> {
    return Promise.all(collectionIds.map((id) => this.aclVersion(id)));
  }

  /** One file per collection: one count each, in this one call. */
  async statsOfMany(requests: ReadonlyArray<CollectionCountRequest>): Promise<CollectionStats[]> {
    return Promise.all(requests.map((r) => this.stats(r.collectionId, r.filter)));
  }

  async readableDocuments(collectionId: string, documentIds: string[], filter: ReadableFilter): Promise<Set<string>> {
    const db = this.files.database(collectionId, false);
    if (!db || documentIds.length === 0) return new Set();
    return this.files.guarded(collectionId, () => readableDocumentIds(db, documentIds, filter));
  }

  /** Counts, or indexStatus "damaged" (and no counts) for a file that cannot be read: a listing of collections must not fail for one. */
  async stats(collectionId: string, filter: ReadableFilter = {}): Promise<CollectionStats> {
    try {
      const db = this.files.database(collectionId, false);
      return db ? this.files.guarded(collectionId, () => countDocuments(db, filter)) : { documentCount: 0, chunkCount: 0, indexStatus: "ok" };
    } catch (error) {
      if (error instanceof IndexDamagedError) return { documentCount: 0, chunkCount: 0, indexStatus: "damaged" };
      throw error;
    }
  }

  async search(collectionId: string, query: string, topK: number, options: SearchOptions = {}): Promise<SearchHit[]> {
    const units = parseQuery(query);
    if (units.length === 0) return [];
    const db = this.files.database(collectionId, false);
    return db ? this.files.guarded(collectionId, () => searchFile(db, units, topK, options, this.ranking)) : [];
  }

  /**
   * What a cached search result is valid for (search-result-cache.ts): the file's `PRAGMA
   * data_version` on this connection, which changes whenever another connection (thread or
   * process) commits to it, with the file's identity, size and modification time, which change
   * when it is replaced, truncated or overwritten behind SQLite's back. null without a file.
   */
  dataVersion(collectionId: string): string | null {
    const db = this.files.database(collectionId, false);
    if (!db) return null;
    let statement = this.versionStatements.get(db);
    if (!statement) {
      statement = db.prepare("PRAGMA data_version").pluck();
      this.versionStatements.set(db, statement);
    }
    const read = statement;
    const version = this.files.guarded(collectionId, () => read.get() as number);
    const file = fs.statSync(this.filePath(collectionId), { throwIfNoEntry: false });
    return file ? `${version}:${file.ino}:${file.size}:${file.mtimeMs}` : null;
  }

  async documentChunks(collectionId: string, documentId: string): Promise<ChunkInput[]> {
    const db = this.files.database(collectionId, false);
    if (!db) return [];
    return this.files.guarded(collectionId, () => readDocumentChunks(db, documentId));
  }

  async chunksByKey(collectionId: string, chunks: ChunkKey[]): Promise<Array<KeyedChunk | null>> {
    const db = this.files.database(collectionId, false);
    if (!db || chunks.length === 0) return chunks.map(() => null);
    return this.files.guarded(collectionId, () => readChunksByKey(db, chunks));
  }

  async drop(collectionId: string): Promise<void> {
    this.files.drop(collectionId);
  }

  /** Closes this process's connection to one collection's file (another thread is about to delete or move it) and forgets its damage. */
  async release(collectionId: string): Promise<void> {
    this.files.release(collectionId);
  }

  /** Records a collection's file as damaged (found so by another thread), closing it here. */
  async markDamaged(collectionId: string): Promise<void> {
    this.files.markDamaged(collectionId);
  }

  /**
   * Sets a damaged file aside as `<id>.damaged-<time>.db` (kept for the user or support, never
   * deleted), so the next write starts a fresh file. Answers the new path, or null without a file.
   */
  async moveAside(collectionId: string): Promise<string | null> {
    return this.files.moveAside(collectionId);
  }

  async close(): Promise<void> {
    this.files.closeAll();
  }

  /**
   * A read-only instance's look at a collection's file before its first read in this process:
   * "missing" (no file), "older" (a schema this build must migrate first, or none committed yet:
   * the writer's work), or "current" after `PRAGMA quick_check` found it sound. Throws
   * IndexDamagedError for a damaged file. Runs wherever the caller sends it (threaded-index.ts: a
   * search reader thread), as the check reads every page.
   */
  async check(collectionId: string): Promise<"missing" | "older" | "current"> {
    return this.files.check(collectionId);
  }

  /**
   * Collections whose files a reader thread of this process has just checked and found sound
   * (ThreadedSqliteIndex passes a job's collection to the writer as the job starts): opening one
   * to write skips its own quick_check, which would read every page again. Only the latest word
   * counts, so an old check is never trusted later; corruption found later is still caught.
   */
  trustChecked(collectionIds: string[]): void {
    this.files.trustChecked(collectionIds);
  }

  /** Opens a collection's file if it has one, bringing an older schema up to date (read-only readers cannot). */
  async upgrade(collectionId: string): Promise<void> {
    this.files.database(collectionId, false);
  }

  /** Merges each index's b-trees into one; worth it after a bulk load. */
  async optimize(collectionId: string): Promise<void> {
    const db = this.files.database(collectionId, false);
    if (!db) return;
    this.files.noteWrite(collectionId);
    optimizeTables(db);
  }

  /** The file of one collection, e.g. for reporting its size; a collection id that is not a UUID is not found. */
  filePath(collectionId: string): string {
    return this.files.filePath(collectionId);
  }
}
