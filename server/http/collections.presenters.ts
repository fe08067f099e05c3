import type { Collection } from "../data/entities/collection.entity";
import type { CollectionStats, DocumentSummary, SearchHit } from "../search/search-index";
import { isoNoZone } from "../time";

export function presentCollection(collection: Collection, stats: CollectionStats = { documentCount: 0, chunkCount: 0, indexStatus: "ok" }) {
  return {
    id: collection.id,
    name: collection.name,
    owner_group_id: collection.ownerGroupId,
    document_count: stats.documentCount,
    chunk_count: stats.chunkCount,
    index_status: stats.indexStatus,
    embedding_model: collection.embeddingModel ?? null,
    created_at: isoNoZone(collection.createdAt),
  };
}

export function presentSearchHit(hit: SearchHit) {
  return {
    document_id: hit.documentId,
    path: hit.path,
    title: hit.title,
    chunk_index: hit.chunkIndex,
    snippet: hit.snippet,
    score: hit.score,
  };
}

export function presentDocument(doc: DocumentSummary) {
  return {
    document_id: doc.documentId,
    data_source_id: doc.sourceId,
    path: doc.path,
    title: doc.title,
    size: doc.size,
    modified_at: isoNoZone(doc.modifiedAt),
    chunk_count: doc.chunkCount,
    indexed_at: isoNoZone(doc.indexedAt),
  };
}

export function presentSearchResults(hits: SearchHit[], mode: string) {
  return { mode, results: hits.map(presentSearchHit) };
}

/** One page of a collection's documents, with the paging it answers. */
export function presentDocumentPage(page: { total: number; items: DocumentSummary[] }, offset: number, limit: number) {
  return { total: page.total, offset, limit, documents: page.items.map(presentDocument) };
}
