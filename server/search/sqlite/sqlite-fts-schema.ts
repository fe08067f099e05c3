import type Database from "better-sqlite3";

/**
 * The layout of a collection's FTS5 file (schema version 6):
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
 * - Since 5, `chunks` keeps where each chunk is (`page`, `location`, `scanned`; PAGED_DOCUMENTS).
 * - A file made by this build has 16 KB pages (NEW_FILE_PAGE_BYTES, sqlite-fts-files.ts), an
 *   older one keeps 4 KB: the page size is not part of the schema version.
 *
 * - Since 5, file-server permissions (issue 33): `acls`, each distinct ACL once (keyed by its
 *   hash, sqlite-fts-acls.ts), and each document's `acl` (null: every member may read it) and
 *   `changed_at` (the change time its permissions were read at); `documents_acl` (id, acl) answers a
 *   search's per-candidate permission check from the index alone (one probe, not two).
 * - Since 6, `empty_files`: the files of a source that yielded no text (no document), with the
 *   identity they were read at, so a re-run skips an unchanged one unread (markEmpty; decision 0497).
 *
 * A file of an older version is upgraded when it is opened (version 1 → 2 fills
 * `chunks_exact` from the stored text, 2 → 3 makes it again with positions, 3 → 4 sets the
 * buffer size, which changes no row, 4 → 5 adds the permission columns, null in every row, 5 → 6 adds `empty_files`, empty; each in one transaction).
 */
export const SCHEMA_VERSION = 6;

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
 * A document indexed before chunks kept their pages gets this version: it differs from any the
 * source reports (none, or a Drive revision), so the next run reads the file again and indexes
 * its pages. Only documents whose chunks have places: PDF, PPTX and XLSX (pictures were not indexed before).
 */
export const PAGES_PENDING = "pages-pending";
export const PAGED_DOCUMENTS = ["pdf", "pptx", "pptm", "xlsx", "xlsm"].map((ext) => `lower(path) LIKE '%.${ext}'`).join(" OR ");

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
  5: `
    ALTER TABLE documents ADD COLUMN acl TEXT;
    ALTER TABLE documents ADD COLUMN changed_at INTEGER;
    CREATE INDEX documents_acl ON documents (id, acl);
    CREATE TABLE acls (seq INTEGER PRIMARY KEY, hash TEXT NOT NULL UNIQUE, server TEXT NOT NULL, acl TEXT NOT NULL);
    ALTER TABLE chunks ADD COLUMN page INTEGER;
    ALTER TABLE chunks ADD COLUMN location TEXT;
    ALTER TABLE chunks ADD COLUMN scanned INTEGER NOT NULL DEFAULT 0;
    UPDATE documents SET version = '${PAGES_PENDING}' WHERE ${PAGED_DOCUMENTS};
  `,
  6: `
    CREATE TABLE empty_files (
      source_id TEXT NOT NULL,
      path TEXT NOT NULL,
      size INTEGER NOT NULL,
      modified_at INTEGER NOT NULL,
      version TEXT,
      PRIMARY KEY (source_id, path)
    ) WITHOUT ROWID;
  `,
};

/** What a file made by a newer build answers: this build must not read or change it. */
export function newerSchemaError(file: string, version: number): Error {
  return new Error(`Search index ${file} has schema version ${version}, newer than this build (${SCHEMA_VERSION})`);
}

/**
 * Brings a file to SCHEMA_VERSION. The version read before the transaction only spares an
 * up-to-date file the write lock; it is read again under the lock (BEGIN IMMEDIATE), since
 * another connection may have created the schema in between.
 */
export function migrate(db: Database.Database): void {
  const seen = db.pragma("user_version", { simple: true }) as number;
  if (seen > SCHEMA_VERSION) throw newerSchemaError(db.name, seen);
  if (seen === SCHEMA_VERSION) return;
  db.transaction(() => {
    // Read again under the write lock: another connection may have created or upgraded the file meanwhile.
    const current = db.pragma("user_version", { simple: true }) as number;
    if (current > SCHEMA_VERSION) throw newerSchemaError(db.name, current);
    for (let version = current + 1; version <= SCHEMA_VERSION; version++) db.exec(SQLITE_INDEX_MIGRATIONS[version]);
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
  }).immediate();
}
