import type Database from "better-sqlite3";
import { toSummary, type DocumentRow } from "../document-row";
import type { ChunkInput, ChunkKey, CollectionStats, DocumentSummary, IndexedState, KeyedChunk, ReadableFilter } from "../search-index";
import { readableSql } from "./sqlite-fts-acls";

/** The reads of one collection's file besides searches: listings, counts, re-sync state and chunk texts. */

export function readIndexedState(db: Database.Database, sourceId: string): Map<string, IndexedState> {
  const state = new Map<string, IndexedState>();
  const rows = db.prepare("SELECT path, size, modified_at, version, changed_at, acl FROM documents WHERE source_id = ?").iterate(sourceId) as Iterable<
    Pick<DocumentRow, "path" | "size" | "modified_at" | "version"> & { changed_at: number | null; acl: string | null }
  >;
  for (const row of rows) {
    const changedAt = row.changed_at === null ? null : new Date(row.changed_at);
    state.set(row.path, { size: row.size, modifiedAt: new Date(row.modified_at), version: row.version, changedAt, aclId: row.acl });
  }
  // Files without text (a path has a document or a mark, never both: each write drops the other).
  const marks = db.prepare("SELECT path, size, modified_at, version FROM empty_files WHERE source_id = ?").iterate(sourceId) as Iterable<
    Pick<DocumentRow, "path" | "size" | "modified_at" | "version">
  >;
  for (const row of marks) state.set(row.path, { size: row.size, modifiedAt: new Date(row.modified_at), version: row.version, changedAt: null, aclId: null, empty: true });
  return state;
}

export function listPage(db: Database.Database, offset: number, limit: number, filter: ReadableFilter = {}): { total: number; items: DocumentSummary[] } {
  const { where, params } = readableWhere(filter);
  const total = db.prepare(`SELECT count(*) FROM documents d${where}`).pluck().get(params) as number;
  const rows = db
    .prepare(`SELECT * FROM documents d${where} ORDER BY path, source_id LIMIT @limit OFFSET @offset`)
    .all({ ...params, limit: Math.max(0, Math.floor(limit)), offset: Math.max(0, Math.floor(offset)) }) as DocumentRow[];
  return { total, items: rows.map(toSummary) };
}

export function countDocuments(db: Database.Database, filter: ReadableFilter = {}): CollectionStats {
  const { where, params } = readableWhere(filter);
  const row = db.prepare(`SELECT count(*) AS documents, coalesce(sum(chunk_count), 0) AS chunks FROM documents d${where}`).get(params) as {
    documents: number;
    chunks: number;
  };
  return { documentCount: row.documents, chunkCount: row.chunks, indexStatus: "ok" };
}

/** The permission filter as a WHERE clause on `documents d` ("" without one). */
function readableWhere(filter: ReadableFilter): { where: string; params: Record<string, string> } {
  const params: Record<string, string> = {};
  const condition = readableSql(filter, (value) => {
    params.readable = value;
    return "@readable";
  });
  return { where: condition === null ? "" : ` WHERE ${condition}`, params };
}

/** One document's chunks in order. */
export function readDocumentChunks(db: Database.Database, documentId: string): ChunkInput[] {
  const sql = "SELECT c.chunk_index AS chunkIndex, f.body AS text FROM chunks c JOIN chunks_fts f ON f.rowid = c.rowid WHERE c.document_id = ? ORDER BY c.chunk_index";
  return db.prepare(sql).all(documentId) as ChunkInput[];
}

/** Some chunks' whole text and place in the order asked, null for one no longer indexed. */
export function readChunksByKey(db: Database.Database, chunks: ChunkKey[]): Array<KeyedChunk | null> {
  const read = db.prepare("SELECT f.body, c.page, c.location, c.scanned FROM chunks c JOIN chunks_fts f ON f.rowid = c.rowid WHERE c.document_id = ? AND c.chunk_index = ?");
  return chunks.map((chunk) => {
    const row = read.get(chunk.documentId, chunk.chunkIndex) as { body: string; page: number | null; location: string | null; scanned: number } | undefined;
    return row ? { text: row.body, page: row.page, locationLabel: row.location, scanned: row.scanned === 1 } : null;
  });
}
