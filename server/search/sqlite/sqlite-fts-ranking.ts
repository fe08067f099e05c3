import type Database from "better-sqlite3";
import { capPerDocument, folderPrefix, spreadPerDocument, type MatchAttempt, type QueryUnit } from "../query";
import type { SearchFilter } from "../search-index";
import { readableSql } from "./sqlite-fts-acls";
import { readablePage, type WindowRow } from "./sqlite-fts-readable";
import type { RankedRow } from "./sqlite-ranked-row";
import { prepared } from "./sqlite-statements";

export type { RankedRow };

/**
 * How one table's matches are ranked (sqlite-fts-search.ts runs it per tier): bm25 over the
 * newest matches within a window, words found in most chunks of a big collection left unscored,
 * a per-document cap or spread, and a filter on the chunks' documents.
 */

/** bm25's column weights (title, path, body), the same for both tables: a title hit outweighs a body hit. */
const BM25_WEIGHTS = "5.0, 2.0, 1.0";
/**
 * How much work one search's ranking may do (rankedChunks(), rankPlan()); tests lower them to
 * reach the paths a big collection takes.
 */
export interface RankingLimits {
  /** The newest matches bm25 scores (~0.5 µs each, besides one walk of each word's doclist for its idf). */
  window: number;
  /** Collections from this many chunks (by rowid) leave words found in most chunks unscored; smaller ones are quick to score in full. */
  commonFrom: number;
  /** Newest matches read to estimate a word's share of the chunks. */
  commonSample: number;
}

/**
 * The window measured on the search bench (100,000 chunks, 500 queries; docs/decisions/0085-sqlite-rank-window.md): its
 * top 10s agree with an unwindowed ranking's on 91.5 % of their chunks at 3,000 (97.5 % at
 * 10,000, 87.6 % at 2,000), at a p95 of ~5 ms against ~7 ms with 10,000.
 */
export const RANKING_LIMITS: RankingLimits = { window: 3_000, commonFrom: 20_000, commonSample: 200 };

/**
 * How many times a page's rows spreadPerDocument is first tried on (walkedChunks); past that the
 * whole window is numbered, its candidates ranked a second time. At 4, a tenth (49 of 500) of the second
 * bench corpus's queries (long files, a word's best chunks in a few of them) were ranked twice;
 * at 8, Sluice's search code alone read p95 4.4 against 6.4 ms there (mean 1.9 against 2.2 ms),
 * and the first corpus the same within 3 % (decision 0537).
 */
const SPREAD_DEPTH = 8;

/**
 * Whether more than `count` chunks match by stem (with the filter): when not, the exact tier
 * already holds every one of them (every exact match is a stem match; uncapped, it held all of
 * its own; with permissions, a short exact page is every readable exact match, since a full
 * window's short page is ranked again with them in the walk, so `where` holds them here too),
 * and the stemmed ranking is not run. Stops after count + 1 (a prefix's doclists are
 * merged for it, but a ranking merges them twice: once to match, once for bm25's idf).
 */
export function hasMoreMatches(db: Database.Database, match: string, count: number, where: SqlFilter | null): boolean {
  const filter = where ? ` AND ${where.sql("chunks_fts")}` : "";
  const sql = `SELECT count(*) FROM (SELECT 1 FROM chunks_fts WHERE chunks_fts MATCH @match${filter} LIMIT @enough)`;
  return (prepared(db, sql, true).get({ match, enough: count + 1, ...where?.params }) as number) > count;
}

/** Whether any chunk matches (stemmed): stops at the first. */
export function anyMatch(db: Database.Database, match: string): boolean {
  return prepared(db, "SELECT 1 FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT 1").get(match) !== undefined;
}

/** The two full-text tables a search ranks: the exact forms and the stems, each with its bm25 weighted alike (title, path, body). */
export type RankedTable = "chunks_exact" | "chunks_fts";

/**
 * A search's filters as a ranking applies them: the type and folder filters in the walk (`where`),
 * the permissions on the window's best rows (`readable`; docs/decisions/0487-permission-filter-after-the-window.md).
 */
export function rankFilters(filter: SearchFilter): Pick<RankScope, "where" | "readable"> {
  const where = filterSql({ types: filter.types, folder: filter.folder });
  if (filter.readableAcls === undefined) return { where, readable: null };
  return { where, readable: { acls: new Set(filter.readableAcls), walked: filterSql(filter)! } };
}

/** A filter as SQL over the chunk's rowid (`<table>.rowid`), with its named parameters (`@filter0`, ...); null without one. */
function filterSql(filter: SearchFilter): SqlFilter | null {
  const conditions: string[] = [];
  const params: Record<string, string> = {};
  const param = (value: string) => {
    const name = `filter${Object.keys(params).length}`;
    params[name] = value;
    return `@${name}`;
  };
  if (filter.types?.length) {
    // Extensions are letters and digits only (the route checks), so they hold no LIKE wildcard.
    conditions.push(`(${filter.types.map((type) => `d.path LIKE ${param(`%.${type}`)}`).join(" OR ")})`);
  }
  if (filter.folder) {
    const prefix = folderPrefix(filter.folder);
    conditions.push(`substr(d.path, 1, ${prefix.length}) = ${param(prefix)}`);
  }
  const readable = readableSql(filter, param);
  // Permissions alone need only each document's (id, acl): the covering index answers a candidate in one probe, where the planner takes the primary key and then the row.
  const documents = readable !== null && conditions.length === 0 ? "documents d INDEXED BY documents_acl" : "documents d";
  if (readable !== null) conditions.push(readable);
  if (conditions.length === 0) return null;
  return {
    sql: (table) => `EXISTS (SELECT 1 FROM chunks c JOIN ${documents} ON d.id = c.document_id WHERE c.rowid = ${table}.rowid AND ${conditions.join(" AND ")})`,
    params,
  };
}

export interface SqlFilter {
  sql: (table: RankedTable) => string;
  params: Record<string, string>;
}

/** What every ranking of one search shares: its filter, its per-document cap or spread (SearchOptions) and its work limits. */
export interface RankScope {
  /** What the walk filters on: the types and folder. */
  where: SqlFilter | null;
  /** The caller's permissions, checked on the window's best rows (readablePage()); null without a permission filter. */
  readable: ReadableScope | null;
  perDocument: number | undefined;
  firstPerDocument: number | undefined;
  limits: RankingLimits;
}

export interface ReadableScope {
  /** The ACL ids the caller may read (a document without one is readable by all). */
  acls: ReadonlySet<string>;
  /** The whole filter, permissions included, in the walk: a full window's short page ranked again, and the stemmed tier's count. */
  walked: SqlFilter;
}

/**
 * What one table's ranking asks: the chunks matching `match`, scored by bm25 over the units of
 * `rank` only; with `rank` null, not scored (every unit is in most chunks, rankedChunks()).
 * `fill`: when the ranking finds fewer than asked, unscored chunks of this wider match follow.
 */
export interface RankPlan {
  match: string;
  rank: string | null;
  fill: string | null;
}

/**
 * Leaves out of the bm25 the units found in most chunks of a big collection. bm25 reads each
 * unit's whole doclist once per query for its idf (~3 ms per 100,000 chunks for a word in
 * all of them), and past half of the chunks that idf is clamped to ~0 (FTS5: log((N - n + 0.5)
 * / (n + 0.5)) <= 0), so such a unit adds nothing to any score. In an AND it still filters,
 * but is not scored; in an OR the other units are ranked, and chunks with only the common ones
 * follow unscored. A unit's share is estimated from its newest `commonSample` matches (a
 * bounded walk); never for the prefix unit (any walk of a prefix merges the doclists of every
 * word it starts).
 */
export function rankPlan(db: Database.Database, table: RankedTable, units: QueryUnit[], attempt: MatchAttempt, limits: RankingLimits): RankPlan {
  const match = toMatch(units, attempt.joiner, attempt.prefix);
  const whole: RankPlan = { match, rank: match, fill: null };
  const newest = prepared(db, "SELECT max(rowid) FROM chunks", true).get() as number | null;
  if (newest === null || newest < limits.commonFrom) return whole;
  const sample = prepared(db, `SELECT count(*) AS n, min(rowid) AS oldest FROM (SELECT rowid FROM ${table} WHERE ${table} MATCH ? ORDER BY rowid DESC LIMIT ?)`);
  const common = units.map((unit) => {
    if (attempt.prefix && unit.prefix) return false;
    const { n, oldest } = sample.get(toMatch([unit], attempt.joiner, false), limits.commonSample) as { n: number; oldest: number | null };
    return n === limits.commonSample && oldest !== null && n / (newest - oldest + 1) > COMMON_SHARE;
  });
  if (!common.includes(true)) return whole;
  const scored = units.filter((_, i) => !common[i]);
  const rank = scored.length === 0 ? null : toMatch(scored, attempt.joiner, attempt.prefix);
  if (attempt.joiner === " AND ") return { match, rank, fill: null };
  return rank === null ? { match, rank: null, fill: null } : { match: rank, rank, fill: match };
}

/** The share of the chunks from which bm25's idf is clamped to ~0. */
const COMMON_SHARE = 0.5;
/** Scores of an unscored ranking (every unit in most chunks): a title hit above a path or body hit, as bm25's weights would put it. */
const UNSCORED_TITLE = -5e-6;
const UNSCORED_OTHER = -1e-6;

/**
 * The best chunks of one table for a plan, best first, bm25 negative (lower is better), within
 * the window (windowedChunks()). A plan without scored units (every word is
 * in most chunks, so bm25 would say almost nothing at the cost of reading every doclist):
 * the newest chunks with the words in their title, then the newest others.
 */
export function rankedChunks(
  db: Database.Database,
  table: RankedTable,
  plan: RankPlan,
  limit: number,
  scope: RankScope,
): RankedRow[] {
  const ranked =
    plan.rank === null
      ? unscoredChunks(db, table, plan.match, limit, scope)
      : windowedChunks(db, table, { match: plan.rank, also: plan.rank === plan.match ? null : plan.match, score: `bm25(${table}, ${BM25_WEIGHTS})` }, limit, scope);
  if (ranked.length >= limit || plan.fill === null) return ranked;
  const seen = new Set(ranked.map((row) => row.rowid));
  return [...ranked, ...unscoredChunks(db, table, plan.fill, limit + ranked.length, scope).filter((row) => !seen.has(row.rowid))].slice(0, limit);
}

/** The newest chunks matching with the words in their title, then the newest others (scored UNSCORED_TITLE, UNSCORED_OTHER). */
function unscoredChunks(db: Database.Database, table: RankedTable, match: string, limit: number, scope: RankScope): RankedRow[] {
  const titled = windowedChunks(db, table, { match: `title : (${match})`, also: null, score: String(UNSCORED_TITLE) }, limit, scope);
  if (titled.length >= limit) return titled;
  const seen = new Set(titled.map((row) => row.rowid));
  const rest = windowedChunks(db, table, { match, also: null, score: String(UNSCORED_OTHER) }, limit + titled.length, scope);
  return [...titled, ...rest.filter((row) => !seen.has(row.rowid))].slice(0, limit);
}

/** One windowed ranking: what must match, what else must (a set the same table answers whole, or null), and the score. */
interface WindowedQuery {
  match: string;
  also: string | null;
  score: string;
}

/**
 * The chunks matching `match` (and `also`), scored by `score`, best first (ties: newest first).
 * Past `window` matches, only the newest `window` are scored. One pass over the matches,
 * newest first (FTS5 walks its doclist in rowid order itself), that stops at the window and
 * scores only the rows it keeps; no separate walk to find where the window starts, which for
 * a prefix or an OR would merge their doclists once more. With permissions, the window is the
 * one without them, and its best rows are checked (readablePage()); a full window too short of
 * readable rows is ranked again with the permissions in the walk.
 */
function windowedChunks(db: Database.Database, table: RankedTable, query: WindowedQuery, limit: number, scope: RankScope): RankedRow[] {
  if (scope.readable === null) return walkedChunks(db, table, query, limit, scope);
  if (query.also !== null) {
    const checked = checkedAlso(db, table, { ...query, also: query.also }, limit, scope);
    if (checked) return checked;
  }
  const { candidates, params } = candidatesSql(table, query, scope);
  const best = prepared(
    db,
    `${candidates} SELECT k.rowid, k.bm25, c.document_id, d.id IS NOT NULL AS known, d.acl
       FROM (SELECT rowid, bm25 FROM candidates ORDER BY bm25, rowid DESC LIMIT @depth) k
       LEFT JOIN chunks c ON c.rowid = k.rowid LEFT JOIN documents d ON d.id = c.document_id
       ORDER BY k.bm25, k.rowid DESC`,
  );
  const page = readablePage((depth) => best.all({ ...params, depth }) as WindowRow[], scope.readable.acls, limit, scope, scope.limits.window);
  return page ?? walkedChunks(db, table, query, limit, { ...scope, where: scope.readable.walked, readable: null });
}

/** The window as a CTE `candidates` (rowid, bm25) over the walk's filter (`scope.where`), with its parameters (all but the page's). */
function candidatesSql(table: RankedTable, query: WindowedQuery, scope: RankScope): { candidates: string; params: Record<string, unknown> } {
  const filter = scope.where ? ` AND ${scope.where.sql(table)}` : "";
  const newest = (columns: string, match: string, conditions: string) =>
    `SELECT ${columns} FROM ${table} WHERE ${table} MATCH ${match}${conditions} ORDER BY ${table}.rowid DESC LIMIT @window`;
  const scored = `${table}.rowid AS rowid, ${query.score} AS bm25`;
  // With `also`, its newest rows (with the filter) are the window, a set the scored match is
  // walked against: FTS5 finds them through `also` (an AND seeks past most of a common word's
  // doclist), and bm25 sees only the scored units. The unary + keeps the set a filter (the
  // scored match stays the outer loop, starting at the set's oldest rowid).
  const candidates =
    query.also === null
      ? `WITH candidates AS (${newest(scored, "@match", filter)})`
      : // MATERIALIZED: read twice (its oldest rowid and the set), the AND with the common word ran twice (measured at 1,000,000 chunks: 141 → 59 ms).
        `WITH also_window AS MATERIALIZED (${newest(`${table}.rowid AS rowid`, "@also", filter)}),
         candidates AS (${newest(scored, "@match", ` AND ${table}.rowid >= (SELECT min(rowid) FROM also_window) AND +${table}.rowid IN (SELECT rowid FROM also_window)`)})`;
  const params = { match: query.match, ...(query.also === null ? {} : { also: query.also }), ...scope.where?.params, window: scope.limits.window };
  return { candidates, params };
}

/** windowedChunks() with every filter in the walk (`scope.where`): the window is the newest `window` matches that pass them. */
function walkedChunks(db: Database.Database, table: RankedTable, query: WindowedQuery, limit: number, scope: RankScope): RankedRow[] {
  if (query.also !== null) {
    const checked = checkedAlso(db, table, { ...query, also: query.also }, limit, scope);
    if (checked) return checked;
  }
  const { candidates, params: windowParams } = candidatesSql(table, query, scope);
  const params = { ...windowParams, limit };
  if (scope.perDocument === undefined && scope.firstPerDocument === undefined) {
    return prepared(db, `${candidates} SELECT rowid, bm25 FROM candidates ORDER BY bm25, rowid DESC LIMIT @limit`).all(params) as RankedRow[];
  }
  // Each chunk's rank n within its document: with perDocument, at most that many of each
  // document (one long document cannot fill the page); with firstPerDocument, a document's
  // chunks past that many after every other document's (none dropped).
  const numbered = `SELECT k.rowid, k.bm25, c.document_id, row_number() OVER (PARTITION BY c.document_id ORDER BY k.bm25, k.rowid DESC) AS n
         FROM candidates k JOIN chunks c ON c.rowid = k.rowid`;
  if (scope.perDocument !== undefined) {
    return prepared(db, `${candidates} SELECT rowid, bm25, document_id FROM (${numbered}) WHERE n <= @perDocument ORDER BY bm25, rowid DESC LIMIT @limit`).all({ ...params, perDocument: scope.perDocument }) as RankedRow[];
  }
  // The spread page comes from the best SPREAD_DEPTH x limit rows when they hold `limit` rows that
  // are among their document's first firstPerDocument: any row below them ranks below every one of
  // them, and a row's rank within its document is the same among them as among all the
  // candidates. Only otherwise (one document holding most of the best rows) is every candidate
  // numbered (a join and a sort of up to the window; 2-3x a plain ranking's time).
  const best = prepared(db, `${candidates} SELECT k.rowid, k.bm25, c.document_id FROM (SELECT rowid, bm25 FROM candidates ORDER BY bm25, rowid DESC LIMIT @depth) k JOIN chunks c ON c.rowid = k.rowid ORDER BY k.bm25, k.rowid DESC`).all({ ...params, depth: limit * SPREAD_DEPTH }) as RankedRow[];
  const documentOf = (row: RankedRow) => row.document_id!;
  const firsts = capPerDocument(best, scope.firstPerDocument, documentOf).length;
  if (firsts >= limit || best.length < limit * SPREAD_DEPTH) return spreadPerDocument(best, scope.firstPerDocument, documentOf).slice(0, limit);
  return prepared(db, `${candidates} SELECT rowid, bm25, document_id FROM (${numbered}) ORDER BY n > @firstPerDocument, bm25, rowid DESC LIMIT @limit`).all({ ...params, firstPerDocument: scope.firstPerDocument }) as RankedRow[];
}

/**
 * windowedChunks() with `also` (units in most chunks, which filter but are not scored), when the
 * scored match has no more than `window` matches (with the filter): then the window is every one
 * of them that matches `also` too, so they are all ranked and `also` is checked only on the best,
 * in rank order, one rowid seek each, until `limit` pass (with a per-document cap, counting only
 * those that pass). Same rows, order and scores as the AND; but the AND seeks a common word's
 * doclist (a million entries at 1,000,000 chunks) for every match of the rarer words, and that
 * was most of such a search's time (docs/decisions/0088-sqlite-search-at-a-million.md). Answers null when the scored match has
 * more matches than the window: which are the newest that match `also` is then the AND's to find.
 * With permissions (`scope.readable`), the count is without them and each best row's document is
 * probed as `also` is: every match is ranked, so the readable ones that pass are all there are.
 */
function checkedAlso(db: Database.Database, table: RankedTable, query: WindowedQuery & { also: string }, limit: number, scope: RankScope): RankedRow[] | null {
  const filter = scope.where ? ` AND ${scope.where.sql(table)}` : "";
  const params = { match: query.match, ...scope.where?.params, window: scope.limits.window };
  const count = `SELECT count(*) FROM (SELECT 1 FROM ${table} WHERE ${table} MATCH @match${filter} LIMIT @window + 1)`;
  if ((prepared(db, count, true).get(params) as number) > scope.limits.window) return null;
  const documentOf = scope.perDocument === undefined ? "" : ", (SELECT c.document_id FROM chunks c WHERE c.rowid = k.rowid) AS document_id";
  const ranked = prepared(
    db,
    `WITH k AS (SELECT ${table}.rowid AS rowid, ${query.score} AS bm25 FROM ${table} WHERE ${table} MATCH @match${filter})
       SELECT rowid, bm25${documentOf} FROM k ORDER BY bm25, rowid DESC`,
  ).all(params) as RankedRow[];
  const also = prepared(db, `SELECT 1 FROM ${table} WHERE ${table} MATCH ? AND rowid = ?`);
  const readable = scope.readable;
  const aclOf = prepared(db, "SELECT d.acl FROM chunks c JOIN documents d ON d.id = c.document_id WHERE c.rowid = ?");
  const mayRead = (rowid: number) => {
    const document = aclOf.get(rowid) as { acl: string | null } | undefined;
    return document !== undefined && (document.acl === null || readable!.acls.has(document.acl));
  };
  const perDocument = new Map<string, number>();
  const kept: RankedRow[] = [];
  for (const row of ranked) {
    const seen = row.document_id === undefined ? 0 : (perDocument.get(row.document_id) ?? 0);
    if (scope.perDocument !== undefined && seen >= scope.perDocument) continue;
    if (readable !== null && !mayRead(row.rowid)) continue;
    // A BigInt: FTS5 ignores a `rowid = REAL` constraint (see snippetsOf).
    if (also.get(query.also, BigInt(row.rowid)) === undefined) continue;
    if (row.document_id !== undefined) perDocument.set(row.document_id, seen + 1);
    kept.push(row);
    if (kept.length >= limit) break;
  }
  return kept;
}

/** FTS5 MATCH text: every unit a quoted string (tokens cannot contain quotes), joined by AND (space) or OR. */
export function toMatch(units: QueryUnit[], joiner: " AND " | " OR ", prefix: boolean): string {
  return units.map((u) => `"${u.tokens.join(" ")}"${prefix && u.prefix ? "*" : ""}`).join(joiner);
}
