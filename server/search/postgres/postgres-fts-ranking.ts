import type { DataSource } from "typeorm";
import { folderPrefix } from "../query";
import { readableCondition } from "./postgres-fts-acls";
import type { SearchOptions } from "../search-index";
import { headlineSql } from "./postgres-fts-snippets";
import { RANK_WINDOW, SPAN_MARGIN, windowSpans, type WindowSpans } from "./postgres-fts-window";
import { IN_COLLECTION, NEWEST_FIRST, chunkConditions, type ExactMatch, type Tsquery } from "./postgres-tsquery";
import type { SpanEstimates } from "./span-estimates";

/** Weights for {D, C, B, A}: title (A) 5 : path (B) 2 : body (C) 1, as the SQLite engine's bm25 weights. */
const WEIGHTS = "'{0.1, 0.2, 0.4, 1.0}'";

/** One ranking: a stemmed tsquery, the exact tier's condition, the search's filter and cap, and the page's size. */
export interface RankRequest {
  collection: string;
  stemmed: Tsquery;
  exact: ExactMatch;
  filter: SearchOptions;
  limit: number;
}

/** A chunk of the page, best first, with its document, its tier and its headline. */
export interface RankedChunkRow {
  id: string;
  document_id: string;
  chunk_index: number;
  source_id: string;
  path: string;
  title: string;
  score: number;
  exact: boolean;
  body: string;
  snippet: string | null;
  page: number | null;
  location: string | null;
  scanned: boolean;
  /** The collection's ACL version as this statement saw it (aclVersion's form: count, newest sequence). */
  acl_version: string;
}

/** What every part of one ranking statement shares: its placeholders (`param`), the stemmed tsquery's SQL, the filter, the window and the page's limits. */
interface RankStatement {
  param: (value: unknown) => string;
  /** The stemmed tsquery, as SQL. */
  q: string;
  from: string;
  /** The type and folder filters' conditions, read in the walk (a window of their matches). */
  filters: string[];
  /** The permission condition on a document `d`, or null: checked on the window's rows, not in the walk (see readableTopSql). */
  readable: string | null;
  spans: WindowSpans | null;
  drives: { stemmed: Tsquery; exact: Tsquery } | null;
  window: string;
  top: string;
  perDocument: string | null;
  firstPerDocument: string | null;
  /** `later, ` where the page orders by it (a spread, firstPerDocument), else nothing: the other statements stay as they were. */
  later: string;
}

/**
 * The best chunks for a stemmed tsquery, in one statement: first the exact tier (chunks that
 * match `exact` on `tsv_exact` too; when that implies the stemmed match, only that is asked),
 * then, when it has fewer than `limit`, the stemmed tier without the exact tier's chunks; each
 * tier ranks at most its RANK_WINDOW most recently indexed matches (whatever the caller may
 * read: the permission filter takes the best readable rows of that window); at most
 * `filter.perDocument` chunks of a document over both; snippets (ts_headline, the dearest
 * part per row) only for the chunks answered.
 *
 * The tsqueries are written into each clause rather than taken from a CTE, so the planner
 * sees them as constants and estimates their matches from the columns' statistics: a rare
 * word is looked up in the GIN index (reading each match), a common one walks the
 * collection's chunks newest first until RANK_WINDOW match.
 */
export async function rankedChunks(db: DataSource, spanEstimates: SpanEstimates, request: RankRequest): Promise<RankedChunkRow[]> {
  // The query is built from placeholders only: user text reaches PostgreSQL as parameters.
  const params: unknown[] = [request.collection];
  const param = (value: unknown) => `$${params.push(value)}`;
  const q = request.stemmed.sql(param);
  const filters = documentFilters(param, request.filter);
  const readable = readableCondition(request.filter, param);
  const from = `search_chunks c${filters.length ? " JOIN search_documents d ON d.id = c.document_id" : ""}`;
  const plan = await windowPlan(db, spanEstimates, request, filters.length > 0);
  const statement: RankStatement = { param, q, from, filters, readable, ...plan, ...pageLimits(param, request) };
  return (await db.query(pageSql(statement, request.exact), params)) as RankedChunkRow[];
}

/** The type and folder filters' conditions on the chunk's document `d` (the permission filter is readableTopSql's). */
function documentFilters(param: (value: unknown) => string, filter: SearchOptions): string[] {
  const filters: string[] = [];
  if (filter.types?.length) filters.push(`lower(d.path) LIKE ANY(${param(filter.types.map((type) => `%.${type}`))}::text[])`);
  if (filter.folder) filters.push(`starts_with(d.path, ${param(folderPrefix(filter.folder))})`);
  return filters;
}

/** How the tiers' windows are read: their spans (windowSpans), and whether a prefix attempt's other units drive its index lookup. */
async function windowPlan(
  db: DataSource,
  spanEstimates: SpanEstimates,
  { collection, stemmed, exact }: RankRequest,
  filtered: boolean,
): Promise<Pick<RankStatement, "spans" | "drives">> {
  // A type or folder filter takes no span (the join in the walk), but a prefix's drive pays off for it as well.
  const estimates = filtered && !stemmed.split ? null : await windowSpans(db, spanEstimates, collection, stemmed, exact);
  return {
    spans: filtered ? null : estimates,
    drives: estimates?.drive ? { stemmed: stemmed.split!.others, exact: exact.tsquery.split!.others } : null,
  };
}

/** The window's and the page's limits as placeholders. */
function pageLimits(param: (value: unknown) => string, { filter, limit }: RankRequest): Pick<RankStatement, "window" | "top" | "perDocument" | "firstPerDocument" | "later"> {
  const window = param(RANK_WINDOW);
  const top = param(limit);
  const perDocument = filter.perDocument === undefined ? null : param(filter.perDocument);
  // A hard cap leaves nothing to spread.
  const firstPerDocument = perDocument !== null || filter.firstPerDocument === undefined ? null : param(filter.firstPerDocument);
  return { window, top, perDocument, firstPerDocument, later: firstPerDocument === null ? "" : "later, " };
}

/** The statement: both tiers, the page over them, and the page's chunks with their documents and headlines. */
function pageSql(s: RankStatement, exact: ExactMatch): string {
  // The stemmed tier runs only when the exact tier did not fill the page (a LIMIT of 0 reads
  // nothing); it then takes `limit` chunks of its own, as the page's per-document cap may drop some.
  const restLimit = `(SELECT CASE WHEN count(*) < ${s.top} THEN ${s.top} ELSE 0 END FROM exact_top)`;
  const answered =
    s.perDocument === null
      ? `SELECT * FROM tiers`
      : `SELECT * FROM (SELECT *, row_number() OVER (PARTITION BY document_id ORDER BY exact DESC, score DESC, id) AS n FROM tiers) t WHERE n <= ${s.perDocument}`;
  return `WITH ${tierSql(s, "exact", exact, "", s.spans?.exact ?? null, s.top)},
       ${tierSql(s, "rest", null, "c.id NOT IN (SELECT id FROM exact_top)", s.spans?.stemmed ?? null, restLimit)},
       tiers AS (
         SELECT id, score, document_id, later, true AS exact FROM exact_top
         UNION ALL
         SELECT id, score, document_id, later, false AS exact FROM rest_top
       ),
       page AS (${answered} ORDER BY exact DESC, ${s.later}score DESC, id LIMIT ${s.top})
       SELECT page.id, c.document_id, c.chunk_index, c.page, c.location, c.scanned, d.source_id, d.path, d.title, page.score, page.exact, c.body,
              ${headlineSql(s.q)} AS snippet,
              (SELECT count(*) || ':' || coalesce(max(a.seq), 0) FROM search_acls a WHERE a.collection_id = $1) AS acl_version
       FROM page JOIN search_chunks c ON c.id = page.id JOIN search_documents d ON d.id = c.document_id
       ORDER BY page.exact DESC, ${s.later && "page.later, "}page.score DESC, page.id`;
}

/** One tier's CTEs, ending in `<name>_top`: its best `limitSql` chunks (id, score, document_id, later: past its document's firstPerDocument). */
function tierSql(s: RankStatement, name: string, tierExact: ExactMatch | null, extra: string, span: number | null, limitSql: string): string {
  const where = (filters: string[]) => [...chunkConditions(s.param, () => s.q, tierExact, s.drives), ...filters, ...(extra ? [extra] : [])].join(" AND ");
  // Ranked as they are read, so only ids and scores are sorted (a sort of the tsvectors spilled to disk).
  const rankedRows = (bound: string) => `SELECT c.id, ts_rank(${WEIGHTS}, c.tsv, ${s.q}) AS score, c.document_id FROM ${s.from} WHERE ${where(s.filters)}${bound}`;
  const ranked = span === null ? `${name}_ranked AS (${rankedRows("")} ORDER BY ${NEWEST_FIRST} LIMIT ${s.window})` : spannedWindowSql(s, name, rankedRows, span);
  const best = (rows: string) => `${tierBestSql(s, rows)} ORDER BY ${s.later}score DESC, id LIMIT ${limitSql}`;
  if (s.readable === null) return `${ranked},
       ${name}_top AS (${best(`${name}_ranked`)})`;
  const readableRows = `SELECT c.id, ts_rank(${WEIGHTS}, c.tsv, ${s.q}) AS score, c.document_id FROM search_chunks c JOIN search_documents d ON d.id = c.document_id WHERE ${where([...s.filters, s.readable])}`;
  return `${ranked},
       ${readableTopSql(s, name, best, readableRows, limitSql)}`;
}

/**
 * A tier's best readable chunks (`<name>_top`) under a permission filter: the best of its
 * window's rows the caller may read (the window read as without permissions, spans and all;
 * the condition checked after, once per document of the window). Only when that window was full
 * (RANK_WINDOW matches, so older ones were left out) and its readable rows fewer than the tier's
 * `limitSql`, the tier is ranked again as before: a window of the newest RANK_WINDOW readable
 * matches (the condition in the walk), so a person gets top_k readable results when that many
 * exist (issue 33 item 8). docs/decisions/0488-permission-filter-after-the-window-postgresql.md.
 *
 * `<name>_short` is a CASE so its window count is read only after the first part came short
 * (then the window was read whole already), and a tier whose limit is 0 reads nothing; the
 * fallback's gate is a one-time filter on its walk, which then reads no row.
 */
function readableTopSql(s: RankStatement, name: string, best: (rows: string) => string, readableRows: string, limitSql: string): string {
  // Each of the window's documents is looked up by id (the LIMIT keeps it a probe): a join let the
  // planner hash every readable document of the table, all collections' (2.5 ms at 10,000, growing
  // with the table), where the probes are bounded by the window (~2 ms for its ~600 documents).
  return `${name}_documents AS MATERIALIZED (SELECT DISTINCT document_id FROM ${name}_ranked),
       ${name}_readable AS (
         SELECT r.id, r.score, r.document_id FROM ${name}_ranked r WHERE r.document_id IN (
           SELECT w.document_id FROM ${name}_documents w JOIN LATERAL (SELECT d.acl FROM search_documents d WHERE d.id = w.document_id LIMIT 1) d ON true WHERE ${s.readable}
         )
       ),
       ${name}_first AS (${best(`${name}_readable`)}),
       ${name}_short AS (
         SELECT CASE WHEN (SELECT count(*) FROM ${name}_first) >= ${limitSql} THEN false ELSE (SELECT count(*) FROM ${name}_ranked) >= ${s.window} END AS short
       ),
       ${name}_fallback AS MATERIALIZED (${readableRows} AND (SELECT short FROM ${name}_short) ORDER BY ${NEWEST_FIRST} LIMIT ${s.window}),
       ${name}_top AS (
         SELECT * FROM ${name}_first WHERE NOT (SELECT short FROM ${name}_short)
         UNION ALL
         (${best(`${name}_fallback`)})
       )`;
}

/**
 * A tier's window (`<name>_ranked`) from a span: the newest RANK_WINDOW matches, in up to three
 * parts: those among the collection's newest `span` chunks (the GIN index's matches ANDed with
 * that id range: only they are read); if those were fewer but some, a second, wider span below
 * it, sized by the matches the first found per id (x SPAN_MARGIN) to hold the rest (a short
 * first span used to read every older match by bitmap, up to ~8,800 rows at 1,000,000 chunks
 * for the ~300 missing); then, if still fewer, the newest of the rest (the walk, which then
 * starts at the bound).
 *
 * The bound is where the newest `span` chunks start, reckoned from the collection's newest and
 * oldest ids and its estimated chunks (ids spread evenly over that range): two index probes.
 * Counting the span's entries in the index (an OFFSET) read up to ~600,000 of them at 1,000,000
 * chunks (650 ms). A bound off the mark costs speed, never rows: the near part reads more
 * matches, or the walk completes the window.
 */
function spannedWindowSql(s: RankStatement, name: string, rankedRows: (bound: string) => string, span: number): string {
  return `${name}_bound AS MATERIALIZED (
               SELECT newest.id - ceil(${s.param(span)} * (newest.id - oldest.id + 1)::float8 / ${s.param(Math.max(1, s.spans!.chunks))})::bigint AS id, newest.id AS newest
               FROM (SELECT c.id FROM search_chunks c WHERE ${IN_COLLECTION} ORDER BY ${NEWEST_FIRST} LIMIT 1) newest,
                    (SELECT c.id FROM search_chunks c WHERE ${IN_COLLECTION} ORDER BY c.collection_id, c.id LIMIT 1) oldest
             ),
             ${name}_near AS MATERIALIZED (${rankedRows(` AND c.id > (SELECT id FROM ${name}_bound)`)} ORDER BY c.id + 0 DESC LIMIT ${s.window}),
             ${name}_wider AS MATERIALIZED (
               SELECT b.id - ceil(${SPAN_MARGIN} * (b.newest - b.id) * (${s.window} - n.found)::float8 / nullif(n.found, 0))::bigint AS id, ${s.window} - n.found AS missing
               FROM ${name}_bound b, (SELECT count(*) AS found FROM ${name}_near) n
             ),
             ${name}_far AS MATERIALIZED (${rankedRows(
               ` AND c.id <= (SELECT id FROM ${name}_bound) AND c.id > (SELECT id FROM ${name}_wider WHERE missing > 0)`,
             )} ORDER BY c.id + 0 DESC LIMIT (SELECT missing FROM ${name}_wider)),
             ${name}_ranked AS (
               SELECT * FROM ${name}_near
               UNION ALL
               SELECT * FROM ${name}_far
               UNION ALL
               (${rankedRows(` AND c.id <= coalesce((SELECT id FROM ${name}_wider WHERE missing > 0), (SELECT id FROM ${name}_bound))`)} ORDER BY ${NEWEST_FIRST} LIMIT (SELECT missing FROM ${name}_wider) - (SELECT count(*) FROM ${name}_far))
             )`;
}

/** A tier's window `rows` with the page's per-document rule: a cap (perDocument), a spread (firstPerDocument: `later` past it), or neither. */
function tierBestSql(s: RankStatement, rows: string): string {
  const numbered = `SELECT id, score, document_id, row_number() OVER (PARTITION BY document_id ORDER BY score DESC, id) AS n FROM ${rows}`;
  // At most perDocument chunks of each document, so one long document cannot fill the page.
  if (s.perDocument !== null) return `SELECT id, score, document_id, false AS later FROM (${numbered}) r WHERE n <= ${s.perDocument}`;
  // A document's chunks past firstPerDocument after every other document's, none dropped.
  if (s.firstPerDocument !== null) return `SELECT id, score, document_id, n > ${s.firstPerDocument} AS later FROM (${numbered}) r`;
  return `SELECT id, score, document_id, false AS later FROM ${rows}`;
}
