import type { Collection } from "../data/entities/collection.entity";
import type { CollectionStats, DocumentSummary } from "../search/search-index";
import type { DocumentLocation } from "../connectors/source-kind";
import type { CollectionSearch, DocumentResult, LocatedHit } from "../collections/search-results";
import { isoNoZone } from "../time";

/** `file_server_permissions`: one entry per file server whose permissions decide what the caller sees here (SMB sources with source_permissions). */
export function presentCollection(collection: Collection, stats: CollectionStats = { documentCount: 0, chunkCount: 0, indexStatus: "ok" }, fileServers: string[] = []) {
  return {
    id: collection.id,
    name: collection.name,
    owner_group_id: collection.ownerGroupId,
    document_count: stats.documentCount,
    chunk_count: stats.chunkCount,
    index_status: stats.indexStatus,
    embedding_model: collection.embeddingModel ?? null,
    file_server_permissions: fileServers.map((server) => ({ server })),
    created_at: isoNoZone(collection.createdAt),
  };
}

/** PUT /collections/{id}/embedding: the collection, and the ingestion jobs started to embed what it holds. */
export function presentCollectionWithJobs(collection: Collection, stats: CollectionStats, fileServers: string[], jobIds: string[]) {
  return { ...presentCollection(collection, stats, fileServers), job_ids: jobIds };
}

export function presentLocation(location: DocumentLocation) {
  return { path: location.path, url: location.url };
}

export function presentSearchHit(hit: LocatedHit) {
  return {
    document_id: hit.documentId,
    path: hit.path,
    title: hit.title,
    chunk_index: hit.chunkIndex,
    snippet: hit.snippet,
    score: hit.score,
    data_source_id: hit.sourceId,
    exact: hit.exact,
    location: presentLocation(hit.location),
    ...presentPlace(hit),
  };
}

/** Where a hit is in its document: `page` (1-based page or slide), `location_label` ("page 7", "slide 3", "sheet Budget"), `from_scan` (read by OCR). */
export function presentPlace(hit: Pick<LocatedHit, "page" | "locationLabel" | "scanned">) {
  return { page: hit.page, location_label: hit.locationLabel, from_scan: hit.scanned };
}

export function presentDocumentResult(doc: DocumentResult) {
  return {
    document_id: doc.documentId,
    data_source_id: doc.sourceId,
    path: doc.path,
    title: doc.title,
    folder: doc.folder,
    type: doc.type,
    location: presentLocation(doc.location),
    score: doc.score,
    exact: doc.exact,
    passages: doc.passages.map((hit) => ({ chunk_index: hit.chunkIndex, snippet: hit.snippet, score: hit.score, exact: hit.exact, ...presentPlace(hit) })),
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

/** `results` (chunk hits, best first) as before; `matched` says whether every word was found; `documents` with group_by=document. */
export function presentSearchResults(search: CollectionSearch) {
  return {
    mode: search.mode,
    results: search.hits.map(presentSearchHit),
    matched: search.matched,
    ...(search.documents ? { documents: search.documents.map(presentDocumentResult) } : {}),
  };
}

/** One page of a collection's documents, with the paging it answers. */
export function presentDocumentPage(page: { total: number; items: DocumentSummary[] }, offset: number, limit: number) {
  return { total: page.total, offset, limit, documents: page.items.map(presentDocument) };
}
