import type Database from "better-sqlite3";
import { capPerDocument, clampTopK, markSnippet, matchAttempts, spreadPerDocument, type MatchAttempt, type QueryUnit } from "../query";
import type { SearchHit, SearchOptions } from "../search-index";
import { anyMatch, hasMoreMatches, rankFilters, rankPlan, rankedChunks, toMatch, type RankScope, type RankedRow, type RankedTable, type RankingLimits } from "./sqlite-fts-ranking";
import { chunkStart, snippetsOf } from "./sqlite-fts-snippets";
import { prepared } from "./sqlite-statements";

interface ChunkRefRow {
  document_id: string;
  source_id: string;
  chunk_index: number;
  path: string;
  title: string;
  page: number | null;
  location: string | null;
  scanned: number | null;
}

type TieredRow = RankedRow & { exact: boolean };

/** What one attempt found: the page's chunks, and the match their snippets are marked with. */
interface AttemptResult {
  top: TieredRow[];
  match: string;
  prefixed: boolean;
  matched: SearchHit["matched"];
}

/** One search of a collection's file: the attempts in turn (query.ts) until one finds chunks, then their hits. */
export function searchFile(db: Database.Database, units: QueryUnit[], topK: number, options: SearchOptions, limits: RankingLimits): SearchHit[] {
  const limit = clampTopK(topK);
  // A hard cap leaves nothing to spread.
  const firstPerDocument = options.perDocument === undefined ? options.firstPerDocument : undefined;
  const scope: RankScope = { ...rankFilters(options), perDocument: options.perDocument, firstPerDocument, limits };
  let found: AttemptResult = { top: [], match: "", prefixed: false, matched: "all" };
  for (const attempt of matchAttempts(units)) {
    // A prefix merges the doclists of every word it starts: not worth it when the other words have no chunk in common.
    if (attempt.prefix && units.length > 1 && !anyMatch(db, toMatch(units.slice(0, -1), attempt.joiner, false))) continue;
    found = { top: tieredChunks(db, units, attempt, limit, scope), match: toMatch(units, attempt.joiner, attempt.prefix), prefixed: attempt.prefix, matched: attempt.matched };
    if (found.top.length > 0) break;
  }
  return hitsOf(db, found);
}

/**
 * One attempt's page: chunks with every word in the very form typed first, ranked by
 * chunks_exact alone, then the stemmed matches; each tier spread on its own, both capped per
 * document together.
 */
function tieredChunks(db: Database.Database, units: QueryUnit[], attempt: MatchAttempt, limit: number, scope: RankScope): TieredRow[] {
  const match = toMatch(units, attempt.joiner, attempt.prefix);
  const plan = (table: RankedTable) => rankPlan(db, table, units, attempt, scope.limits);
  // When the exact tier fills the page, the stemmed ranking is not even run (a common word's exact form usually does).
  const exact = rankedChunks(db, "chunks_exact", plan("chunks_exact"), limit, scope);
  const seen = new Set(exact.map((row) => row.rowid));
  const stemmed =
    exact.length < limit && (scope.perDocument !== undefined || hasMoreMatches(db, match, exact.length, scope.readable?.walked ?? scope.where))
      ? rankedChunks(db, "chunks_fts", plan("chunks_fts"), limit + exact.length, scope).filter((row) => !seen.has(row.rowid))
      : [];
  // Each tier spread on its own (a no-op on one windowed ranking's rows, which come spread; it
  // orders rankings joined one after another, rankedChunks()'s fill and unscored parts).
  const spread = (rows: RankedRow[]) => spreadPerDocument(rows, scope.firstPerDocument, (row) => row.document_id!);
  const tiers = [...spread(exact).map((row) => ({ ...row, exact: true })), ...spread(stemmed).map((row) => ({ ...row, exact: false }))];
  return capPerDocument(tiers, scope.perDocument, (row) => row.document_id!).slice(0, limit);
}

/** The page's chunks as hits, with their documents and marked snippets (a chunk whose document is gone meanwhile is left out). */
function hitsOf(db: Database.Database, { top, match, prefixed, matched }: AttemptResult): SearchHit[] {
  const snippets = snippetsOf(db, match, top.map((row) => row.rowid), prefixed);
  const body = prepared(db, "SELECT body FROM chunks_fts WHERE rowid = ?", true);
  const ref = prepared(
    db,
    `SELECT c.document_id, c.chunk_index, c.page, c.location, c.scanned, d.source_id, d.path, d.title
     FROM chunks c JOIN documents d ON d.id = c.document_id WHERE c.rowid = ?`,
  );
  const hits: SearchHit[] = [];
  for (const { rowid, bm25, exact } of top) {
    const chunk = ref.get(rowid) as ChunkRefRow | undefined;
    if (!chunk) continue;
    const found = snippets.get(rowid);
    // An exact prefix can find a word whose stem does not start with it ("highlighte" in
    // "highlighter", stem "highlight"): no stemmed match to mark, so the chunk's start stands in.
    const text = found?.body ?? ((body.get(BigInt(rowid)) as string | undefined) ?? "");
    hits.push({
      documentId: chunk.document_id,
      sourceId: chunk.source_id,
      path: chunk.path,
      title: chunk.title,
      chunkIndex: chunk.chunk_index,
      snippet: markSnippet(found?.snippet ?? chunkStart(text)),
      text,
      score: -bm25,
      exact,
      matched,
      page: chunk.page,
      locationLabel: chunk.location,
      scanned: chunk.scanned === 1,
    });
  }
  return hits;
}
