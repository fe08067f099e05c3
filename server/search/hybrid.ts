import type { SearchHit } from "./search-index";
import type { VectorHit } from "./vector-store";

/**
 * Reciprocal rank fusion (Cormack, Clarke & Büttcher 2009): each ranking adds 1 / (k + rank)
 * to a chunk's score, so a chunk both rankings place high comes first, with no need to make
 * BM25 scores and cosine similarities comparable. k = 60 is the paper's constant.
 */
export const RRF_K = 60;

/**
 * A semantic hit in the search result's shape: its snippet is the chunk's start (no terms to
 * mark), HTML-escaped; it is not an exact-words hit, and no word fallback happened (matched "all").
 */
export function vectorHitAsSearchHit(hit: VectorHit): SearchHit {
  return {
    documentId: hit.documentId,
    sourceId: hit.sourceId,
    path: hit.path,
    title: hit.title,
    chunkIndex: hit.chunkIndex,
    snippet: escapeHtml(hit.preview),
    // The vector store keeps only the chunk's start; an ask reads the whole text from the index (CollectionRetrieval.passages).
    text: hit.preview,
    score: hit.similarity,
    exact: false,
    matched: "all",
    // The vector store keeps no places: the index says them (readBack in hybridSearch, CollectionRetrieval).
    page: null,
    locationLabel: null,
    scanned: false,
  };
}

/** Fuses rankings (each best first) into one, best first, topK long; a chunk keeps the snippet of the first ranking that has it. */
export function reciprocalRankFusion(rankings: SearchHit[][], topK: number, k = RRF_K): SearchHit[] {
  const fused = new Map<string, SearchHit>();
  for (const ranking of rankings) {
    ranking.forEach((hit, rank) => {
      const key = `${hit.documentId}\u0000${hit.chunkIndex}`;
      const score = 1 / (k + rank + 1);
      const seen = fused.get(key);
      if (seen) seen.score += score;
      else fused.set(key, { ...hit, score });
    });
  }
  return [...fused.values()].sort((a, b) => b.score - a.score).slice(0, topK);
}

const keyOf = (hit: SearchHit) => `${hit.documentId}\u0000${hit.chunkIndex}`;

/**
 * Keyword and vector rankings of one query fused: each is asked for more than topK (a chunk
 * ranked just below the cut in both should still win), then fused. The chunks only the vector
 * ranking found go through `readBack` (their text and place from the index, where a hit found
 * by words already has them); one it does not answer (gone from the index since) is left out.
 */
export async function hybridSearch(
  keyword: (topK: number) => Promise<SearchHit[]>,
  semantic: (topK: number) => Promise<VectorHit[]>,
  topK: number,
  readBack: (hits: SearchHit[]) => Promise<SearchHit[]> = async (hits) => hits,
): Promise<SearchHit[]> {
  const depth = Math.max(topK * 2, 20);
  const [byWords, byMeaning] = await Promise.all([keyword(depth), semantic(depth)]);
  const fused = reciprocalRankFusion([byWords, byMeaning.map(vectorHitAsSearchHit)], topK);
  const byWordsKeys = new Set(byWords.map(keyOf));
  const meaningOnly = fused.filter((hit) => !byWordsKeys.has(keyOf(hit)));
  if (meaningOnly.length === 0) return fused;
  const read = new Map((await readBack(meaningOnly)).map((hit) => [keyOf(hit), hit]));
  return fused.flatMap((hit) => (byWordsKeys.has(keyOf(hit)) ? [hit] : (read.get(keyOf(hit)) ?? [])));
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
