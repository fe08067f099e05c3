import type { DataSource } from "typeorm";
import { toSummary, type DocumentRow } from "../document-row";
import type { ChunkInput, ChunkKey, CollectionCountRequest, CollectionStats, DocumentSummary, IndexedState, KeyedChunk, ReadableFilter } from "../search-index";
import { readableCondition } from "./postgres-fts-acls";

/** The index's reads besides searches: listings, counts, re-sync state and chunk texts. */

export async function readIndexedState(db: DataSource, collection: string, sourceId: string): Promise<Map<string, IndexedState>> {
  const rows = (await db.query(
    "SELECT path, size, modified_at, version, changed_at, acl FROM search_documents WHERE collection_id = $1 AND source_id = $2",
    [collection, sourceId],
  )) as Array<Pick<DocumentRow, "path" | "size" | "modified_at" | "version"> & { changed_at: string | null; acl: string | null }>;
  const state = new Map<string, IndexedState>();
  for (const row of rows) {
    const changedAt = row.changed_at === null ? null : new Date(Number(row.changed_at));
    state.set(row.path, { size: row.size, modifiedAt: new Date(row.modified_at), version: row.version, changedAt, aclId: row.acl });
  }
  // Files without text (a path has a document or a mark, never both: each write drops the other).
  const marks = (await db.query("SELECT path, size, modified_at, version FROM search_empty_files WHERE collection_id = $1 AND source_id = $2", [collection, sourceId])) as Array<
    Pick<DocumentRow, "path" | "size" | "modified_at" | "version">
  >;
  for (const row of marks) {
    state.set(row.path, { size: Number(row.size), modifiedAt: new Date(Number(row.modified_at)), version: row.version, changedAt: null, aclId: null, empty: true });
  }
  return state;
}

export async function listPage(
  db: DataSource,
  collection: string,
  offset: number,
  limit: number,
  filter: ReadableFilter = {},
): Promise<{ total: number; items: DocumentSummary[] }> {
  const readable = readableCondition(filter, () => "$2");
  const where = `d.collection_id = $1${readable === null ? "" : ` AND ${readable}`}`;
  const params = readable === null ? [collection] : [collection, [...filter.readableAcls!]];
  const [{ total }] = (await db.query(`SELECT count(*) AS total FROM search_documents d WHERE ${where}`, params)) as { total: number }[];
  const next = params.length + 1;
  // COLLATE "C": byte order, as SQLite sorts, whatever the database's locale.
  const rows = (await db.query(`SELECT * FROM search_documents d WHERE ${where} ORDER BY path COLLATE "C", source_id COLLATE "C" LIMIT $${next} OFFSET $${next + 1}`, [
    ...params,
    Math.max(0, Math.floor(limit)),
    Math.max(0, Math.floor(offset)),
  ])) as DocumentRow[];
  return { total: Number(total), items: rows.map(toSummary) };
}

/** One collection's counts of what the filter lets through. */
export async function countReadable(db: DataSource, collection: string, filter: ReadableFilter): Promise<CollectionStats> {
  const readable = readableCondition(filter, () => "$2")!;
  const [row] = (await db.query(
    `SELECT count(*) AS documents, coalesce(sum(chunk_count), 0)::bigint AS chunks FROM search_documents d WHERE d.collection_id = $1 AND ${readable}`,
    [collection, [...(filter.readableAcls ?? [])]],
  )) as { documents: string; chunks: string }[];
  return { documentCount: Number(row.documents), chunkCount: Number(row.chunks), indexStatus: "ok" };
}

/**
 * Several collections' counts, each with its own permission filter, in one statement (a listing's
 * for one caller): a collection without a filter counts every document; one with a filter counts
 * those without an ACL or with one of its readable ids, by the (collection_id, acl) index.
 */
export async function countReadableMany(db: DataSource, requests: ReadonlyArray<CollectionCountRequest>): Promise<CollectionStats[]> {
  if (requests.length === 0) return [];
  const ids = [...new Set(requests.map((r) => r.collectionId))];
  const filtered = ids.map((id) => requests.find((r) => r.collectionId === id)!.filter.readableAcls !== undefined);
  const pairs = requests.flatMap((r) => (r.filter.readableAcls ?? []).map((acl) => [r.collectionId, acl] as const));
  const rows = (await db.query(
    `WITH c(collection_id, filtered) AS (SELECT * FROM unnest($1::varchar[], $2::boolean[])),
          r(collection_id, acl) AS (SELECT * FROM unnest($3::varchar[], $4::text[]))
     SELECT d.collection_id, count(*) AS documents, coalesce(sum(d.chunk_count), 0)::bigint AS chunks
       FROM search_documents d JOIN c ON c.collection_id = d.collection_id
      WHERE NOT c.filtered OR d.acl IS NULL OR EXISTS (SELECT 1 FROM r WHERE r.collection_id = d.collection_id AND r.acl = d.acl)
      GROUP BY d.collection_id`,
    [ids, filtered, pairs.map(([id]) => id), pairs.map(([, acl]) => acl)],
  )) as Array<{ collection_id: string; documents: string; chunks: string }>;
  const found = new Map(rows.map((row) => [row.collection_id, row]));
  return requests.map((r) => ({ documentCount: Number(found.get(r.collectionId)?.documents ?? 0), chunkCount: Number(found.get(r.collectionId)?.chunks ?? 0), indexStatus: "ok" as const }));
}

/** Every collection's counts in one statement (a listing's). */
export async function countDocuments(db: DataSource, collections: string[]): Promise<Map<string, CollectionStats>> {
  const rows = (await db.query(
    `SELECT collection_id, count(*) AS documents, coalesce(sum(chunk_count), 0)::bigint AS chunks
       FROM search_documents WHERE collection_id = ANY($1::varchar[]) GROUP BY collection_id`,
    [collections],
  )) as { collection_id: string; documents: number; chunks: number }[];
  const found = new Map(rows.map((row) => [row.collection_id, row]));
  // PostgreSQL looks after its own storage: a collection here is never "damaged" in our sense.
  return new Map(
    collections.map((id) => [id, { documentCount: Number(found.get(id)?.documents ?? 0), chunkCount: Number(found.get(id)?.chunks ?? 0), indexStatus: "ok" as const }]),
  );
}

/** One document's chunks in order. */
export async function readDocumentChunks(db: DataSource, collection: string, documentId: string): Promise<ChunkInput[]> {
  const rows = (await db.query("SELECT chunk_index, body FROM search_chunks WHERE collection_id = $1 AND document_id = $2 ORDER BY chunk_index", [
    collection,
    documentId,
  ])) as { chunk_index: number; body: string }[];
  return rows.map((r) => ({ chunkIndex: r.chunk_index, text: r.body }));
}

/** Some chunks' whole text and place in the order asked, null for one no longer indexed. */
export async function readChunksByKey(db: DataSource, collection: string, chunks: ChunkKey[]): Promise<Array<KeyedChunk | null>> {
  const rows = (await db.query(
    `SELECT k.n, c.body, c.page, c.location, c.scanned FROM unnest($2::varchar[], $3::int[]) WITH ORDINALITY AS k(document_id, chunk_index, n)
       JOIN search_chunks c ON c.document_id = k.document_id AND c.chunk_index = k.chunk_index AND c.collection_id = $1`,
    [collection, chunks.map((c) => c.documentId), chunks.map((c) => c.chunkIndex)],
  )) as { n: string; body: string; page: number | null; location: string | null; scanned: boolean }[];
  const found: Array<KeyedChunk | null> = chunks.map(() => null);
  for (const row of rows) found[Number(row.n) - 1] = { text: row.body, page: row.page, locationLabel: row.location, scanned: row.scanned };
  return found;
}
