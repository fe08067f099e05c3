import type { DocumentSummary } from "./search-index";

/** A `documents` row as both engines store it (times in epoch milliseconds). */
export interface DocumentRow {
  id: string;
  source_id: string;
  path: string;
  title: string;
  size: number;
  modified_at: number;
  version: string | null;
  chunk_count: number;
  indexed_at: number;
}

export function toSummary(row: DocumentRow): DocumentSummary {
  return {
    documentId: row.id,
    sourceId: row.source_id,
    path: row.path,
    title: row.title,
    size: row.size,
    modifiedAt: new Date(row.modified_at),
    chunkCount: row.chunk_count,
    indexedAt: new Date(row.indexed_at),
  };
}
