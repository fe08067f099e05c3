import * as fs from "node:fs";
import Database from "better-sqlite3";
import { sqliteNativeBinding } from "../data/sqlite-binding";
import { isCorruption } from "./index-damage";

/**
 * A collection's exact-words table (`chunks_exact`) lives in a file of its own beside the
 * collection's file (`<id>.exact.db` beside `<id>.db`, since the collection file's schema 5), so
 * a second writer thread tokenizes and commits it while the index writer does the stemmed table:
 * the two FTS5 tables were ~40 % and ~60 % of the writer, the job's critical path
 * (docs/decisions.md, "Ingestion speed").
 *
 * It holds nothing of its own: every row is derived from the collection file's `chunks_fts`
 * (same rowids, same title, path and body, unstemmed). The two files are kept consistent by a
 * sequence number: each write transaction of the collection file that changes `chunks_fts` bumps
 * `index_state.exact_seq`, and the same changes are applied to this file in a transaction of
 * its own that sets `exact_state.seq` to the same number. A file that is missing, damaged, of
 * another schema, behind or ahead when the collection file is opened for writing is rebuilt
 * from `chunks_fts` (rebuildExactFile), so a crash between the two commits costs a rebuild,
 * never a wrong answer.
 */

/** The exact file's own schema version (its `user_version`), independent of the collection file's. */
export const EXACT_SCHEMA_VERSION = 1;

/** The pending-terms buffer, as the collection file's tables (sqlite-fts-index.ts: FTS_HASH_BYTES). */
const FTS_HASH_BYTES = 8 * 1024 * 1024;

/** As the collection file's (sqlite-fts-index.ts). */
const NEW_FILE_PAGE_BYTES = 16 * 1024;
const WAL_CHECKPOINT_BYTES = 4 * 1000 * 1024;
const SMALL_CACHE_KIB = 2000;

const EXACT_TABLE = `
  CREATE VIRTUAL TABLE chunks_exact USING fts5(
    title, path, body,
    content = '', contentless_delete = 1,
    tokenize = 'unicode61 remove_diacritics 2'
  );
  INSERT INTO chunks_exact (chunks_exact, rank) VALUES ('hashsize', ${FTS_HASH_BYTES});
`;

/** What one write transaction of the collection file changed in `chunks_fts`, in order: applied to the exact file as one transaction. */
export interface ExactBatch {
  /** The collection file's `exact_seq` after that transaction. */
  seq: number;
  /** Rows removed (applied first: a rowid is never reused, see sqlite-fts-index.ts's next_chunk). */
  deletes: number[];
  /**
   * Rows added, by rowid. Their title, path and body are read back from the collection file's
   * `chunks_fts` (committed before the batch is sent), inside SQLite: text never crosses threads,
   * which held two batches of it in the exact thread's heap and one in the writer's (+33 MB peak
   * RSS on the bench, docs/decisions.md). A row a later batch has already removed is not there to
   * read, and that batch's delete of it is skipped (applyExactBatch).
   */
  inserts: number[];
}

/** The exact file of a collection file. */
export function exactPathOf(mainFile: string): string {
  return mainFile.replace(/\.db$/, ".exact.db");
}

/** The collection file of an exact file. */
export function mainPathOf(exactFile: string): string {
  return exactFile.replace(/\.exact\.db$/, ".db");
}

/** Opens an existing exact file to write (the exact writer's connection); WAL, as the collection file. */
export function openExactForWrite(file: string): Database.Database {
  const db = new Database(file, { fileMustExist: true, nativeBinding: sqliteNativeBinding() });
  try {
    db.pragma("busy_timeout = 5000");
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.pragma(`cache_size = -${SMALL_CACHE_KIB}`);
    db.pragma(`wal_autocheckpoint = ${WAL_CHECKPOINT_BYTES / (db.pragma("page_size", { simple: true }) as number)}`);
    if (db.pragma("user_version", { simple: true }) !== EXACT_SCHEMA_VERSION) throw new Error(`${file} is not an exact-words file of this build`);
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}

/**
 * Applies one batch in one transaction; a batch at or below the file's sequence number is already
 * in (a repeat) and skipped. The collection file is attached for the batch only (so no handle to
 * it outlives the batch: a deleted collection's file goes, on Windows too), and the transaction
 * is deferred: BEGIN IMMEDIATE would take the attached collection file's write lock too, which
 * its own writer holds while it writes the next batch.
 */
export function applyExactBatch(db: Database.Database, batch: ExactBatch): void {
  const source = mainPathOf(db.name);
  // ATTACH would make an empty file of a collection file that is gone (the collection deleted).
  if (!fs.existsSync(source)) throw new Error(`${source} is gone`);
  db.prepare("ATTACH DATABASE ? AS src").run(source);
  try {
    // Only rows the file holds: FTS5 counts a delete of an absent rowid in its averages all the same
    // (bm25's row count and mean length), and a row removed before its batch was read is absent.
    const remove = db.prepare("DELETE FROM chunks_exact WHERE rowid = ? AND EXISTS (SELECT 1 FROM chunks_exact_docsize WHERE id = ?)");
    const insert = db.prepare("INSERT INTO chunks_exact (rowid, title, path, body) SELECT rowid, title, path, body FROM src.chunks_fts WHERE rowid = ?");
    db.transaction(() => {
      const seq = db.prepare("SELECT seq FROM exact_state").pluck().get() as number;
      if (batch.seq <= seq) return;
      if (batch.seq !== seq + 1) throw new Error(`exact-words file out of step (at ${seq}, batch ${batch.seq})`);
      // Rowids as BigInt: better-sqlite3 binds a JS number as a REAL, which FTS5 does not take as a rowid.
      for (const rowid of batch.deletes) remove.run(BigInt(rowid), rowid);
      for (const rowid of batch.inserts) insert.run(BigInt(rowid));
      db.prepare("UPDATE exact_state SET seq = ?").run(batch.seq);
    })();
  } finally {
    db.exec("DETACH DATABASE src");
  }
}

/**
 * Why an exact file cannot be used as it is: null when it is at `seq`. `check`: run quick_check
 * (left out when a reader thread has just checked it, as for the collection's file).
 */
export function exactFileProblem(file: string, seq: number, check = true): string | null {
  if (!fs.existsSync(file)) return "missing";
  let db: Database.Database | undefined;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true, nativeBinding: sqliteNativeBinding() });
    db.pragma("busy_timeout = 5000");
    const version = db.pragma("user_version", { simple: true }) as number;
    if (version !== EXACT_SCHEMA_VERSION) return `schema ${version}`;
    if (check && db.pragma("quick_check", { simple: true }) !== "ok") return "damaged";
    const at = db.prepare("SELECT seq FROM exact_state").pluck().get() as number;
    if (at < seq) return `behind (${at} of ${seq})`;
    if (at > seq) return `ahead (${at} of ${seq})`;
    return null;
  } catch (error) {
    if (isCorruption(error)) return "damaged";
    return `unreadable (${(error as Error).message})`;
  } finally {
    db?.close();
  }
}

/**
 * Makes the exact file again from the collection file's `chunks_fts`, at its `exact_seq`, in one
 * transaction (readers keep the old rows until it commits). Run by the collection's writer while
 * it holds no transaction open and the exact writer has nothing queued for the file: it reads
 * the collection file through ATTACH, in that transaction's snapshot. A file SQLite cannot open
 * as ours (damaged, another schema) is deleted and made anew; a sound one is refilled in place
 * (a file open elsewhere cannot be deleted on Windows). Answers the rows it holds.
 */
export function rebuildExactFile(mainFile: string): number {
  const file = exactPathOf(mainFile);
  let db = openForRebuild(file);
  if (!db) {
    for (const suffix of ["", "-wal", "-shm", "-journal"]) fs.rmSync(file + suffix, { force: true });
    db = openForRebuild(file);
    if (!db) throw new Error(`cannot create ${file}`);
  }
  try {
    db.prepare("ATTACH DATABASE ? AS src").run(mainFile);
    let rows = 0;
    db.transaction(() => {
      db!.exec("DROP TABLE IF EXISTS chunks_exact; DROP TABLE IF EXISTS exact_state;");
      db!.exec(EXACT_TABLE);
      db!.exec("CREATE TABLE exact_state (seq INTEGER NOT NULL)");
      rows = db!.prepare("INSERT INTO chunks_exact (rowid, title, path, body) SELECT rowid, title, path, body FROM src.chunks_fts").run().changes;
      db!.exec("INSERT INTO exact_state (seq) SELECT exact_seq FROM src.index_state");
      db!.pragma(`user_version = ${EXACT_SCHEMA_VERSION}`);
    }).immediate();
    db.exec("DETACH DATABASE src");
    return rows;
  } finally {
    db.close();
  }
}

/** A connection to refill the file in place, or undefined when it cannot be trusted (damaged, not ours, unreadable). */
function openForRebuild(file: string): Database.Database | undefined {
  let db: Database.Database | undefined;
  try {
    db = new Database(file, { nativeBinding: sqliteNativeBinding() });
    db.pragma("busy_timeout = 5000");
    db.pragma(`page_size = ${NEW_FILE_PAGE_BYTES}`);
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.pragma(`cache_size = -${SMALL_CACHE_KIB}`);
    const version = db.pragma("user_version", { simple: true }) as number;
    if (version !== 0 && version !== EXACT_SCHEMA_VERSION) throw new Error("another schema");
    if (db.pragma("quick_check", { simple: true }) !== "ok") throw new Error("damaged");
    return db;
  } catch {
    db?.close();
    return undefined;
  }
}
