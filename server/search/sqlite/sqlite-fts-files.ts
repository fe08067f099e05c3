import * as fs from "node:fs";
import Database from "better-sqlite3";
import { sqliteNativeBinding } from "../../data/sqlite-binding";
import { IndexDamagedError, isCorruption } from "../index-damage";
import { collectionFile } from "./collection-file";
import { matchesCleanMark, removeCleanMark, writeCleanMark } from "./sqlite-fts-clean-mark";
import { optimizeFragmented } from "./sqlite-fts-segments";
import { SCHEMA_VERSION, migrate, newerSchemaError } from "./sqlite-fts-schema";

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

/** How often a busy WAL switch is tried before its error stands (about 2 s in all). */
const WAL_SWITCH_ATTEMPTS = 20;

export interface SqliteFtsFilesOptions {
  dir: string;
  readOnly: boolean;
  checkOnOpen: boolean;
  smallCache: boolean;
  /** Told of each quick_check run at an open, with the file (tests observe the check this way, not by its time). */
  onQuickCheck?: (file: string) => void;
}

/** What a job's end did to a collection's file (settle). */
export interface SettledFile {
  /** The full-text tables folded into one segment each. */
  optimized: string[];
  /** Whether the clean mark was left beside the file. */
  marked: boolean;
  /** Why the optimize did not happen (a full disk): the job's writes stand, and the next job that writes tries again. */
  skipped?: string;
}

/**
 * One process's connections to the collection files (`<dir>/<id>.db`): opened lazily, kept open
 * until release/close, and the damage found on them (see SqliteFtsIndex). Every statement on a
 * file runs through guarded() (or an open through guardedFile()), the one place a corruption
 * error closes the file, marks it damaged and becomes IndexDamagedError.
 */
export class SqliteFtsFiles {
  private readonly open = new Map<string, Database.Database>();
  /** Files found damaged, by path: answered at once rather than re-read per request. */
  private readonly damaged = new Set<string>();
  /** A file another connection of this process found sound a moment ago (a search reader's check): its next open here skips quick_check. */
  private readonly checkedElsewhere = new Set<string>();
  /** Files this connection wrote since their last settle(): their clean mark is gone, and the job's end folds and marks them. */
  private readonly written = new Set<string>();

  constructor(private readonly options: SqliteFtsFilesOptions) {}

  /** The file of one collection, e.g. for reporting its size. */
  filePath(collectionId: string): string {
    return collectionFile(this.options.dir, collectionId);
  }

  /**
   * The open database of a collection; without `create`, undefined when it has no file yet.
   * An existing file is checked once as it is opened (quick_check reads every page but skips
   * the index cross-checks of integrity_check), never per request.
   */
  database(collectionId: string, create: boolean): Database.Database | undefined {
    const file = this.filePath(collectionId);
    const cached = this.open.get(file);
    if (cached) return cached;
    if (this.damaged.has(file)) throw new IndexDamagedError();
    const db = this.options.readOnly ? this.openReadOnly(file) : this.openWritable(file, create);
    if (db) this.open.set(file, db);
    return db;
  }

  /** Runs statements on a collection's open file (see guardedFile). */
  guarded<T>(collectionId: string, work: () => T): T {
    return this.guardedFile(this.filePath(collectionId), work);
  }

  /**
   * A read-only instance's look at a collection's file before its first read in this process:
   * "missing", "older" (the writer's to migrate) or "current" once quick_check found it sound
   * (SqliteFtsIndex.check).
   */
  check(collectionId: string): "missing" | "older" | "current" {
    if (!fs.existsSync(this.filePath(collectionId))) return "missing";
    const db = this.database(collectionId, false);
    if (!db) return "older";
    this.guarded(collectionId, () => this.assertSoundUnlessClean(this.filePath(collectionId), db));
    return "current";
  }

  /** Collections whose files were just found sound elsewhere (SqliteFtsIndex.trustChecked): only the latest word counts. */
  trustChecked(collectionIds: string[]): void {
    this.checkedElsewhere.clear();
    for (const id of collectionIds) {
      const file = this.filePath(id);
      if (!this.open.has(file)) this.checkedElsewhere.add(file);
    }
  }

  /**
   * Before a write to a collection's file: its clean mark goes first (the identity it holds
   * would not match after the write anyway, but an open in between must not trust it).
   */
  noteWrite(collectionId: string): void {
    const file = this.filePath(collectionId);
    if (this.written.has(file)) return;
    removeCleanMark(file);
    this.written.add(file);
  }

  /**
   * A job's writes to the collection are over (all committed). A file this connection wrote
   * since the last settle has its fragmented full-text tables optimized (sqlite-fts-segments.ts),
   * its WAL folded back in and truncated, and its clean mark left beside it; a file not written
   * since (a no-change re-run) is left as it is.
   */
  settle(collectionId: string): SettledFile {
    const file = this.filePath(collectionId);
    if (!this.written.has(file)) return { optimized: [], marked: false };
    const db = this.database(collectionId, false);
    if (!db) return { optimized: [], marked: false };
    return this.guarded(collectionId, () => {
      let optimized: string[];
      try {
        optimized = optimizeFragmented(db);
      } catch (error) {
        // Damage is damage (guarded); anything else (SQLITE_FULL: the rewrite needs room) must not fail a job whose writes all committed.
        if (isCorruption(error)) throw error;
        return { optimized: [], marked: false, skipped: (error as Error).message };
      }
      // A reader mid-search keeps frames in use: then the WAL stays, and so does the check.
      const [checkpoint] = db.pragma("wal_checkpoint(TRUNCATE)") as Array<{ busy: number }>;
      this.written.delete(file);
      return { optimized, marked: checkpoint.busy === 0 && writeCleanMark(file) };
    });
  }

  /** Closes this process's connection to one collection's file and forgets its damage. */
  release(collectionId: string): void {
    const file = this.filePath(collectionId);
    const db = this.open.get(file);
    this.damaged.delete(file);
    if (db) {
      this.open.delete(file);
      db.close();
    }
  }

  /** Records a collection's file as damaged (found so by another thread), closing it here. */
  markDamaged(collectionId: string): void {
    this.release(collectionId);
    removeCleanMark(this.filePath(collectionId));
    this.damaged.add(this.filePath(collectionId));
  }

  /** Deletes a collection's file and what SQLite keeps beside it. */
  drop(collectionId: string): void {
    const file = this.filePath(collectionId);
    this.release(collectionId);
    this.written.delete(file);
    removeCleanMark(file);
    for (const suffix of ["", "-wal", "-shm", "-journal"]) fs.rmSync(file + suffix, { force: true });
  }

  /** Sets a file aside as `<id>.damaged-<time>.db` (kept, never deleted); answers the new path, or null without a file. */
  moveAside(collectionId: string): string | null {
    const file = this.filePath(collectionId);
    this.release(collectionId);
    this.written.delete(file);
    removeCleanMark(file);
    if (!fs.existsSync(file)) return null;
    const aside = file.replace(/\.db$/, `.damaged-${new Date().toISOString().replace(/[:.]/g, "-")}.db`);
    fs.renameSync(file, aside);
    if (fs.existsSync(`${file}-wal`)) fs.renameSync(`${file}-wal`, `${aside}-wal`);
    for (const suffix of ["-shm", "-journal"]) fs.rmSync(file + suffix, { force: true });
    return aside;
  }

  closeAll(): void {
    for (const db of this.open.values()) db.close();
    this.open.clear();
  }

  /**
   * Runs work on one file (opening it, or statements on it open): a corruption error closes the
   * file here, marks it damaged and answers IndexDamagedError (a file damaged before or while
   * open); any other error stands.
   */
  private guardedFile<T>(file: string, work: () => T): T {
    try {
      return work();
    } catch (error) {
      if (!isCorruption(error)) throw error;
      this.open.get(file)?.close();
      this.open.delete(file);
      this.damaged.add(file);
      removeCleanMark(file);
      throw new IndexDamagedError();
    }
  }

  /** quick_check at an open, unless the file is as its writer left it after a clean job (sqlite-fts-clean-mark.ts). */
  private assertSoundUnlessClean(file: string, db: Database.Database): void {
    if (matchesCleanMark(file)) return;
    this.options.onQuickCheck?.(file);
    assertSound(db);
  }

  /** A writable connection, creating the file when asked and bringing its schema up to date. */
  private openWritable(file: string, create: boolean): Database.Database | undefined {
    const existed = fs.existsSync(file);
    if (!create && !existed) return undefined;
    fs.mkdirSync(this.options.dir, { recursive: true });
    return this.guardedFile(file, () =>
      closedOnError(new Database(file, { nativeBinding: sqliteNativeBinding() }), (db) => {
        // The busy timeout first: switching a new file to WAL takes a lock a reader may hold for a moment.
        db.pragma("busy_timeout = 5000");
        // Before the WAL switch, which writes the new file's first page.
        db.pragma(`page_size = ${NEW_FILE_PAGE_BYTES}`);
        switchToWal(db);
        db.pragma("synchronous = NORMAL");
        db.pragma(`cache_size = -${SMALL_CACHE_KIB}`);
        db.pragma(`wal_autocheckpoint = ${WAL_CHECKPOINT_BYTES / (db.pragma("page_size", { simple: true }) as number)}`);
        if (existed && !this.checkedElsewhere.delete(file)) this.assertSoundUnlessClean(file, db);
        migrate(db);
        return db;
      }),
    );
  }

  /**
   * A read-only connection, beside the writer's (WAL lets readers and one writer work at once).
   * A file the writer has not finished creating (no schema committed yet) counts as empty, and
   * is looked at again next time: only a file with its schema in place is kept open.
   */
  private openReadOnly(file: string): Database.Database | undefined {
    if (!fs.existsSync(file)) return undefined;
    return this.guardedFile(file, () =>
      closedOnError(new Database(file, { readonly: true, fileMustExist: true, nativeBinding: sqliteNativeBinding() }), (db) => {
        db.pragma("busy_timeout = 5000");
        const version = db.pragma("user_version", { simple: true }) as number;
        if (version > SCHEMA_VERSION) throw newerSchemaError(file, version);
        if (version < SCHEMA_VERSION) {
          db.close();
          return undefined;
        }
        if (this.options.smallCache) db.pragma(`cache_size = -${SMALL_CACHE_KIB}`);
        if (this.options.checkOnOpen) this.assertSoundUnlessClean(file, db);
        return db;
      }),
    );
  }
}

/** Sets up a connection just opened; one whose setup fails is closed before the error goes on. */
function closedOnError<T>(db: Database.Database, setUp: (db: Database.Database) => T): T {
  try {
    return setUp(db);
  } catch (error) {
    db.close();
    throw error;
  }
}

/** A file quick_check finds unsound fails as SQLite's own corruption error would. */
function assertSound(db: Database.Database): void {
  if (db.pragma("quick_check", { simple: true }) !== "ok") throw Object.assign(new Error("quick_check failed"), { code: "SQLITE_CORRUPT" });
  // The check read every page of the file; none of them is needed in the cache now.
  db.pragma("shrink_memory");
}

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
