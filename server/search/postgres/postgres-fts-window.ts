import type { DataSource } from "typeorm";
import { IN_COLLECTION, chunkConditions, type ExactMatch, type Tsquery } from "./postgres-tsquery";
import type { SpanEstimates } from "./span-estimates";

/** How much of a collection a ranking reads: its window of newest matches, and the span of newest chunks that window is read from. */

/**
 * Past this many matches only the most recently indexed are ranked. Each costs a row read and a
 * ts_rank (ts_rank_cd was 5x dearer on multi-word queries): a common word costs this many.
 * (The SQLite engine has its own window, RANKING_LIMITS.)
 */
export const RANK_WINDOW = 2_000;
/**
 * When the window is read from the GIN index's matches among the collection's newest chunks
 * (see windowSpans): only past this many estimated matches (fewer are read whole, by the GIN
 * index), and only when a match is rarer than one chunk in this many (the walk newest first
 * reads that many chunks per match, each a heap page visit of its own; a span costs ~1.25 rows
 * read per match plus two index range scans). SPAN_MARGIN: the span holds this many times the
 * window by the estimate, so an underestimate rarely leaves the walk to finish the window.
 */
const SPAN_MIN_MATCHES = 2 * RANK_WINDOW;
const SPAN_MIN_CHUNKS_PER_MATCH = 4;
export const SPAN_MARGIN = 1.25;
/** A collection with fewer chunks than this never takes a span (SpanEstimates asks it no EXPLAIN). */
export const SPAN_MIN_CHUNKS = SPAN_MIN_MATCHES * SPAN_MIN_CHUNKS_PER_MATCH;

/** A node of EXPLAIN (FORMAT JSON)'s plan: its estimated rows and its children. */
interface PlanNode {
  "Plan Rows": number;
  Plans?: PlanNode[];
}

/**
 * A prefix attempt's other units drive its index lookup (TsquerySplit) when their estimated
 * matches times this are fewer than the prefix's: checking the prefix on a row cost 2-3 µs,
 * collecting one of the prefix's index entries ~0.11 µs (1,000,000 chunks in memory; a row read
 * from disk would cost more, an entry not). docs/decisions/0115-postgres-prefix-drive.md.
 */
const PREFIX_DRIVE_ROW_COST = 25;

/** For each tier, how many of the collection's newest chunks to read its window from (null: no span); `drive`: see windowSpans. */
export interface WindowSpans {
  exact: number | null;
  stemmed: number | null;
  /** The collection's chunks, as the planner estimates them. */
  chunks: number;
  drive: boolean;
}

/**
 * For each tier, how many of the collection's newest chunks should hold RANK_WINDOW matches,
 * from the planner's estimates of the matches and of the collection's chunks; null when
 * walking the chunks newest first is as cheap (a common word: few chunks read per match) or
 * the GIN index's matches are few enough to read them all (a rare word). Only a cost: the
 * window's rows are the same either way (a span that holds too few is completed by the walk).
 * For a prefix attempt of several units (`stemmed.split`), also whether to look up the other
 * units in the GIN index rather than the prefix (`drive`, see TsquerySplit).
 * One EXPLAIN for both tiers, its answer kept a while (SpanEstimates), and none at all for a
 * collection too small for a span.
 */
export async function windowSpans(db: DataSource, spanEstimates: SpanEstimates, collection: string, stemmed: Tsquery, exact: ExactMatch): Promise<WindowSpans | null> {
  if (spanEstimates.tooSmall(collection)) return null;
  const params: unknown[] = [collection];
  const param = (value: unknown) => `$${params.push(value)}`;
  const exactWhere = chunkConditions(param, () => stemmed.sql(param), exact, null).join(" AND ");
  const stemmedWhere = chunkConditions(param, () => stemmed.sql(param), null, null).join(" AND ");
  const split = stemmed.split;
  const splitPlans = split
    ? ` UNION ALL SELECT 1 FROM search_chunks c WHERE ${IN_COLLECTION} AND c.tsv @@ (${split.others.sql(param)})` +
      ` UNION ALL SELECT 1 FROM search_chunks c WHERE ${IN_COLLECTION} AND c.tsv @@ (${split.prefix.sql(param)})`
    : "";
  const sql = `EXPLAIN (FORMAT JSON) SELECT 1 FROM search_chunks c WHERE ${exactWhere} UNION ALL SELECT 1 FROM search_chunks c WHERE ${stemmedWhere} UNION ALL SELECT 1 FROM search_chunks WHERE collection_id = $1${splitPlans}`;
  const key = JSON.stringify([sql, params]);
  let estimate = spanEstimates.get(key);
  if (!estimate) {
    const [{ "QUERY PLAN": plan }] = (await db.query(sql, params)) as { "QUERY PLAN": { Plan: PlanNode }[] }[];
    const [exactMatches, stemmedMatches, chunks, othersMatches, prefixMatches] = (plan[0].Plan.Plans ?? []).map((p) => p["Plan Rows"]);
    // The other units drive the lookup when the prefix's entries are expected to cost more than checking the prefix on each of their rows.
    estimate = { exactMatches, stemmedMatches, chunks, drive: split !== null && othersMatches * PREFIX_DRIVE_ROW_COST < prefixMatches };
    spanEstimates.set(collection, key, estimate);
  }
  return {
    exact: windowSpan(estimate.exactMatches, estimate.chunks),
    stemmed: windowSpan(estimate.stemmedMatches, estimate.chunks),
    chunks: estimate.chunks,
    drive: estimate.drive,
  };
}

/**
 * How many of a collection's newest chunks to read a tier's window from, for the planner's
 * estimates of its matches and of the collection's chunks; null when reading all matches (few)
 * or walking the chunks newest first (a common word) costs less (see windowSpans).
 *
 * A span's own cost is small beside the rows it spares: its id range is read from the BRIN index
 * (ID_RANGES, schema 4) as block ranges, ~8 ms for half of a 1,000,000-chunk collection (the
 * primary-key bitmap before it: 57 ms, so spans were taken only from ~11,000 estimated matches
 * there, and every word outside the statistics' most common elements, estimated at 5,000, read
 * all its matches, up to ~11,000 pages). Past SPAN_MIN_MATCHES a span spares at least 1,500 rows,
 * and at the sizes where a span is hundreds of thousands of chunks the table is beyond
 * shared_buffers, so most rows spared are page reads from outside it. docs/decisions/0113-postgres-brin-and-second-span.md.
 */
export function windowSpan(matches: number, chunks: number): number | null {
  if (!(matches > SPAN_MIN_MATCHES && chunks > 0) || chunks / matches < SPAN_MIN_CHUNKS_PER_MATCH) return null;
  return Math.ceil((SPAN_MARGIN * RANK_WINDOW * chunks) / matches);
}
