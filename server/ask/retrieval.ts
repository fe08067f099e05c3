import type { Actor } from "../access/actor";
import type { DocumentPermissions } from "../access/document-permissions";
import type { ReadableFilter, SearchHit } from "../search/search-index";

/** One passage an answer may use: a chunk of a document of the collection. */
export interface Passage {
  documentId: string;
  title: string;
  path: string;
  /** Text around the match, matched terms in <mark>…</mark> (as search answers it). */
  snippet: string;
  /** The chunk's whole text: what goes into the prompt. */
  text: string;
  /** Higher is better; only the order means something. */
  score: number;
  /** Where the passage is in its document (null: unpaged), and whether OCR read it. */
  page: number | null;
  locationLabel: string | null;
  scanned: boolean;
}

/**
 * What finds an ask's passages: the collection's retrieval (collections/collection-retrieval.ts,
 * given by app.ts), which decides keyword or hybrid as a search without `mode` does and gives
 * each hit its chunk's whole text. An interface here, as ask/ stands below collections/.
 */
export interface PassageFinder {
  passages(collectionId: string, embeddingModel: string | null, query: string, topK: number, filter: ReadableFilter): Promise<SearchHit[]>;
}

/**
 * The passages of one collection that best answer `query`, best first: the one seam between
 * asking and how passages are found. The collection's retrieval decides how (hybrid, keyword
 * and vector rankings fused, where the collection has an embedding model; keyword otherwise)
 * and gives each passage its chunk's whole text. The caller has already checked access; only
 * passages of documents the asker may read are found (the filter is part of the query), so the
 * `sources` event, the citations and the prompt never see another.
 */
export async function retrievePassages(
  retrieval: PassageFinder,
  permissions: DocumentPermissions,
  actor: Actor,
  ask: { collectionId: string; embeddingModel: string | null; query: string; topK: number },
): Promise<Passage[]> {
  const hits = await permissions.readable(actor, ask.collectionId, (filter) => retrieval.passages(ask.collectionId, ask.embeddingModel, ask.query, ask.topK, filter));
  return hits.map((hit) => ({ documentId: hit.documentId, title: hit.title, path: hit.path, snippet: hit.snippet, text: hit.text, score: hit.score, page: hit.page, locationLabel: hit.locationLabel, scanned: hit.scanned }));
}
