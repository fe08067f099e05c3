import path from "node:path";
import type { DocumentLocation } from "../connectors/source-kind";
import type { SearchHit } from "../search/search-index";

/** The best passages shown under one document of a grouped result. */
export const PASSAGES_PER_DOCUMENT = 3;
/** Chunk hits fetched per document asked for when grouping (the engine caps each document at PASSAGES_PER_DOCUMENT of them). */
export const HITS_PER_DOCUMENT = PASSAGES_PER_DOCUMENT;
/**
 * Chunk results (no grouping): at most this many chunks of one document before the other
 * documents' (SearchOptions.firstPerDocument; its other chunks follow, none dropped): each
 * document's best chunk first, so a short file with a rare word is not pushed off the page by
 * a few long documents' many chunks with it (issue 14 item 6; docs/decisions/0081-results-spread-by-document.md).
 */
export const RESULTS_FIRST_PER_DOCUMENT = 1;

export interface LocatedHit extends SearchHit {
  location: DocumentLocation;
}

/** One document of a grouped result: its best passages (chunk hits, best first), its best score and rank. */
export interface DocumentResult {
  documentId: string;
  sourceId: string;
  path: string;
  title: string;
  location: DocumentLocation;
  /** The folder of its path ("share/sub"; "" at the top), what the folder filter takes. */
  folder: string;
  /** Its extension in lower case ("pdf"), what the type filter takes; null without one. */
  type: string | null;
  score: number;
  exact: boolean;
  passages: LocatedHit[];
}

export interface CollectionSearch {
  /** The mode that answered: keyword, semantic or hybrid (collection-retrieval.ts). */
  mode: "keyword" | "semantic" | "hybrid";
  hits: LocatedHit[];
  /** "any" when no chunk had every word and the search fell back to any of them. */
  matched: "all" | "any";
  /** With group_by=document: one entry per document, in the order of its best hit. */
  documents: DocumentResult[] | null;
}

/** A document path's extension as the type filter sees it. */
function fileType(documentPath: string): string | null {
  const ext = path.posix.extname(documentPath).slice(1).toLowerCase();
  return ext === "" ? null : ext;
}

/** Chunk hits (best first) as documents, each under its best hit's rank, with up to PASSAGES_PER_DOCUMENT passages. */
export function groupByDocument(hits: LocatedHit[], limit: number): DocumentResult[] {
  const documents = new Map<string, DocumentResult>();
  for (const hit of hits) {
    let entry = documents.get(hit.documentId);
    if (!entry) {
      if (documents.size >= limit) continue;
      const folder = path.posix.dirname(hit.path);
      entry = {
        documentId: hit.documentId,
        sourceId: hit.sourceId,
        path: hit.path,
        title: hit.title,
        location: hit.location,
        folder: folder === "." ? "" : folder,
        type: fileType(hit.path),
        score: hit.score,
        exact: hit.exact,
        passages: [],
      };
      documents.set(hit.documentId, entry);
    }
    if (entry.passages.length < PASSAGES_PER_DOCUMENT) entry.passages.push(hit);
  }
  return [...documents.values()];
}
