import type Database from "better-sqlite3";
import { toSummary, type DocumentRow } from "../document-row";
import type { ChunkInput, ChunkKey, CollectionStats, DocumentSummary, IndexedState } from "../search-index";

/** The reads of one collection's file besides searches: listings, counts, re-sync state and chunk texts. */

export function readIndexedState(db: Database.Database, sourceId: string): Map<string, IndexedState> {
  const state = new Map<string, IndexedState>();
  const rows = db.prepare("SELECT path, size, modified_at, version FROM documents WHERE source_id = ?").iterate(sourceId) as Iterable<
    Pick<DocumentRow, "path" | "size" | "modified_at" | "version">
  >;
  for (const row of rows) {
    state.set(row.path, { size: row.size, modifiedAt: new Date(row.modified_at), version: row.version });
  }
  return state;
}

export function listPage(db: Database.Database, offset: number, limit: number): { total: number; items: DocumentSummary[] } {
  const total = db.prepare("SELECT count(*) FROM documents").pluck().get() as number;
  const rows = db
    .prepare("SELECT * FROM documents ORDER BY path, source_id LIMIT ? OFFSET ?")
    .all(Math.max(0, Math.floor(limit)), Math.max(0, Math.floor(offset))) as DocumentRow[];
  return { total, items: rows.map(toSummary) };
}

export function countDocuments(db: Database.Database): CollectionStats {
  const row = db.prepare("SELECT count(*) AS documents, coalesce(sum(chunk_count), 0) AS chunks FROM documents").get() as {
    documents: number;
    chunks: number;
  };
  return { documentCount: row.documents, chunkCount: row.chunks, indexStatus: "ok" };
}

/** One document's chunks in order. */
export function readDocumentChunks(db: Database.Database, documentId: string): ChunkInput[] {
  const sql = "SELECT c.chunk_index AS chunkIndex, f.body AS text FROM chunks c JOIN chunks_fts f ON f.rowid = c.rowid WHERE c.document_id = ? ORDER BY c.chunk_index";
  return db.prepare(sql).all(documentId) as ChunkInput[];
}

/** Some chunks' whole text in the order asked, null for one no longer indexed. */
export function readChunkTexts(db: Database.Database, chunks: ChunkKey[]): Array<string | null> {
  const read = db.prepare("SELECT f.body FROM chunks c JOIN chunks_fts f ON f.rowid = c.rowid WHERE c.document_id = ? AND c.chunk_index = ?").pluck();
  return chunks.map((chunk) => (read.get(chunk.documentId, chunk.chunkIndex) as string | undefined) ?? null);
}
