import crypto from "node:crypto";
import type Database from "better-sqlite3";
import { clean } from "../query";
import { aclIdOf } from "./sqlite-fts-acls";
import type { ChunkInput, DocumentHeader, DocumentInput, EmptyFile } from "../search-index";

/**
 * The writes on one collection's file, each in one transaction (BEGIN IMMEDIATE). A staged
 * document's chunks are rows without a `documents` row: searches skip them (a hit is joined to
 * its document) until commitStaged writes that row in place of the old one.
 */

const INSERT_CHUNK = "INSERT INTO chunks (document_id, chunk_index, page, location, scanned) VALUES (?, ?, ?, ?, ?)";

const INSERT_DOCUMENT = `INSERT INTO documents (id, source_id, path, title, size, modified_at, version, chunk_count, indexed_at, acl, changed_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

/** A path that gets a document is no longer a file without text (markEmpty). */
const DROP_MARK = "DELETE FROM empty_files WHERE source_id = ? AND path = ?";

/** Chunks no document row owns: what staged documents of a dead process left behind. */
const ORPHANS = "SELECT rowid FROM chunks WHERE document_id NOT IN (SELECT id FROM documents)";

/**
 * Adds or replaces documents, the whole batch in one transaction: FTS5 writes a new index
 * segment per commit, so committing documents in batches rather than one by one is several
 * times faster. Answers the new documents' ids.
 */
export function writeDocuments(db: Database.Database, docs: DocumentInput[]): string[] {
  const findOld = db.prepare("SELECT id FROM documents WHERE source_id = ? AND path = ?").pluck();
  const insertChunk = db.prepare(INSERT_CHUNK);
  const insertFts = chunkInserter(db);
  const insertDocument = db.prepare(INSERT_DOCUMENT);
  const dropMark = db.prepare(DROP_MARK);
  const ids = docs.map(() => crypto.randomUUID());
  db.transaction(() => {
    docs.forEach((doc, i) => {
      const title = clean(doc.title);
      const docPath = clean(doc.path);
      const old = findOld.get(doc.sourceId, doc.path) as string | undefined;
      // New chunks first; the old version is removed only once they are all in. The new
      // document row comes last because UNIQUE(source_id, path) admits one row at a time.
      for (const chunk of doc.chunks) {
        const { lastInsertRowid } = insertChunk.run(ids[i], ...placeOf(chunk));
        insertFts(lastInsertRowid, title, docPath, clean(chunk.text));
      }
      if (old !== undefined) deleteDocument(db, old);
      dropMark.run(doc.sourceId, doc.path);
      insertDocument.run(ids[i], doc.sourceId, doc.path, doc.title, doc.size, doc.modifiedAt.getTime(), doc.version, doc.chunks.length, Date.now(), ...permissionColumns(db, doc));
    });
  }).immediate();
  return ids;
}

/** One batch of a staged document's chunks. */
export function stageChunks(db: Database.Database, documentId: string, doc: DocumentHeader, chunks: ChunkInput[]): void {
  const insertChunk = db.prepare(INSERT_CHUNK);
  const insertFts = chunkInserter(db);
  const title = clean(doc.title);
  const docPath = clean(doc.path);
  db.transaction(() => {
    for (const chunk of chunks) {
      const { lastInsertRowid } = insertChunk.run(documentId, ...placeOf(chunk));
      insertFts(lastInsertRowid, title, docPath, clean(chunk.text));
    }
  }).immediate();
}

/** The staged document takes the old version's place. */
export function commitStaged(db: Database.Database, documentId: string, doc: DocumentHeader, chunkCount: number): void {
  const findOld = db.prepare("SELECT id FROM documents WHERE source_id = ? AND path = ?").pluck();
  db.transaction(() => {
    const old = findOld.get(doc.sourceId, doc.path) as string | undefined;
    if (old !== undefined) deleteDocument(db, old);
    db.prepare(DROP_MARK).run(doc.sourceId, doc.path);
    db.prepare(INSERT_DOCUMENT).run(documentId, doc.sourceId, doc.path, doc.title, doc.size, doc.modifiedAt.getTime(), doc.version, chunkCount, Date.now(), ...permissionColumns(db, doc));
  }).immediate();
}

/** Drops a document (staged or not) and its chunks. */
export function discardDocument(db: Database.Database, documentId: string): void {
  db.transaction(() => deleteDocument(db, documentId)).immediate();
}

/** Whether any chunk has no document: read before removeOrphans, since most jobs find none and need not take the write lock (or count as a write). */
export function hasOrphans(db: Database.Database): boolean {
  return db.prepare(`${ORPHANS} LIMIT 1`).get() !== undefined;
}

/** Drops the chunks no document owns. */
export function removeOrphans(db: Database.Database): void {
  db.transaction(() => {
    db.prepare(`DELETE FROM chunks_fts WHERE rowid IN (${ORPHANS})`).run();
    db.prepare(`DELETE FROM chunks_exact WHERE rowid IN (${ORPHANS})`).run();
    db.prepare(`DELETE FROM chunks WHERE rowid IN (${ORPHANS})`).run();
  }).immediate();
}

/** Removes documents of one source by path, and the marks of files without text there. */
export function removeByPath(db: Database.Database, sourceId: string, paths: string[]): void {
  const find = db.prepare("SELECT id FROM documents WHERE source_id = ? AND path = ?").pluck();
  const dropMark = db.prepare(DROP_MARK);
  db.transaction(() => {
    for (const p of paths) {
      const id = find.get(sourceId, p) as string | undefined;
      if (id !== undefined) deleteDocument(db, id);
      dropMark.run(sourceId, p);
    }
  }).immediate();
}

/** Remembers files without text (a document at the path goes: the file no longer has any). */
export function writeEmptyMarks(db: Database.Database, sourceId: string, files: EmptyFile[]): void {
  const find = db.prepare("SELECT id FROM documents WHERE source_id = ? AND path = ?").pluck();
  const mark = db.prepare("INSERT OR REPLACE INTO empty_files (source_id, path, size, modified_at, version) VALUES (?, ?, ?, ?, ?)");
  db.transaction(() => {
    for (const file of files) {
      const id = find.get(sourceId, file.path) as string | undefined;
      if (id !== undefined) deleteDocument(db, id);
      mark.run(sourceId, file.path, file.size, file.modifiedAt.getTime(), file.version);
    }
  }).immediate();
}

/** Merges each index's b-trees into one; worth it after a bulk load. */
export function optimizeTables(db: Database.Database): void {
  db.prepare("INSERT INTO chunks_fts (chunks_fts) VALUES ('optimize')").run();
  db.prepare("INSERT INTO chunks_exact (chunks_exact) VALUES ('optimize')").run();
}

/** A document row's acl and changed_at (its ACL stored once in `acls`, inside the caller's transaction). */
function permissionColumns(db: Database.Database, doc: DocumentHeader): [string | null, number | null] {
  return [aclIdOf(db, doc.permissions), doc.permissions?.changedAt?.getTime() ?? null];
}

/** A chunk's row values after its document id: index, page, location, scanned. */
function placeOf(chunk: ChunkInput): [number, number | null, string | null, number] {
  return [chunk.chunkIndex, chunk.page ?? null, chunk.location ?? null, chunk.scanned ? 1 : 0];
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
