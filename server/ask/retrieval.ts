import type { SearchIndex } from "../search/search-index";

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
}

/**
 * The passages of one collection that best answer `query`, best first: the one seam between
 * asking and how passages are found. Today it is the collection's keyword search (FTS5 /
 * PostgreSQL full text); hybrid retrieval (keyword + vectors, fused by rank) slots in here.
 * The caller has already checked access to the collection.
 */
export async function retrievePassages(index: SearchIndex, collectionId: string, query: string, topK: number): Promise<Passage[]> {
  const hits = await index.search(collectionId, query, topK);
  return hits.map((hit) => ({ documentId: hit.documentId, title: hit.title, path: hit.path, snippet: hit.snippet, text: hit.text, score: hit.score }));
}
