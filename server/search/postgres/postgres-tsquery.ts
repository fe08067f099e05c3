import type { MatchAttempt, QueryUnit } from "../query";
import { EXACT_CONFIG } from "./postgres-fts-schema";

/** The query units as tsqueries, and what a ranked chunk must match (the conditions of every ranking statement and of its EXPLAIN). */

/** A token PostgreSQL's parser keeps as one word (letters, or letters and digits). */
const PLAIN_WORD = /^[\p{L}\p{N}]+$/u;

/**
 * A search's chunks: the collection's ($1), and they newest first. Written as `= ANY` of one
 * value rather than `=` so the planner keeps collection_id in the ORDER BY (an `=` makes it a
 * constant it drops, leaving `ORDER BY id DESC`): then only search_chunks_collection
 * (collection_id, id) reads the walk in that order, never the primary key. Once the tables have
 * statistics the planner took the primary key backwards, filtering on the collection, as it
 * assumes the collection's chunks are spread evenly among the others'; but a collection's chunks
 * come in runs, and the first of four collections ingested into the same tables was reached
 * only after the 78,000 newer chunks of the other three (200-500 ms, 6 % of the bench's
 * searches; docs/decisions/0107-postgres-collection-walk.md). Same estimates as `=` (one value's frequency).
 */
export const IN_COLLECTION = "c.collection_id = ANY(ARRAY[$1]::varchar[])";
export const NEWEST_FIRST = "c.collection_id DESC, c.id DESC";

/** A tsquery as SQL, its user text handed to `param` (which answers the placeholder). */
export interface Tsquery {
  sql(param: (value: string) => string): string;
  /** For a prefix attempt of several units: its other units, and the prefix unit alone (see TsquerySplit). */
  split: TsquerySplit | null;
}

/**
 * A prefix attempt's tsquery in two parts, all of whose matches match both. PostgreSQL looks up
 * a prefix in a GIN index by collecting the entries of every word it begins, whole, before
 * ANDing them with the other words: at 1,000,000 chunks 'fenfen':* is ~500,000 entries and took
 * ~50 ms per index however rare the other words were (the slowest of the search bench's queries,
 * 100-200 ms for the two tiers). When the other words are rare, they are looked up instead and
 * the prefix checked on each of their rows (well under a millisecond for a few hundred).
 */
export interface TsquerySplit {
  others: Tsquery;
  prefix: Tsquery;
}

/**
 * The tsquery for the units, all (&&) or any (||) of them: a unit is a phrase
 * (phraseto_tsquery parses plain text, so no input is ever tsquery syntax); a prefix unit's
 * last token becomes 'token':* (tokens are letters, digits, marks and symbols only, and are
 * quoted besides). Under EXACT_CONFIG a phrase's words are asked for each on their own, as the
 * SQLite engine's position-less exact table does: the stemmed query beside it asks for the phrase.
 */
export function toTsquery(units: QueryUnit[], attempt: MatchAttempt, config: string): Tsquery {
  const words = config === EXACT_CONFIG ? "plainto_tsquery" : "phraseto_tsquery";
  const joiner = attempt.matched === "all" ? "&&" : "||";
  // A word typed twice is asked for once (the planner would count its selectivity twice).
  const distinct = [...new Map(units.map((u) => [`${attempt.prefix && u.prefix}:${u.tokens.join(" ")}`, u])).values()];
  const tsquery = (some: QueryUnit[], split: TsquerySplit | null): Tsquery => ({
    sql: (param) =>
      some
        .map((unit) => {
          if (!(attempt.prefix && unit.prefix)) return `${words}('${config}', ${param(unit.tokens.join(" "))})`;
          const last = unit.tokens.at(-1)!;
          const lastQuery = `to_tsquery('${config}', ${param(`'${last.replace(/['\\]/g, "")}':*`)})`;
          if (unit.tokens.length === 1) return lastQuery;
          const head = `${words}('${config}', ${param(unit.tokens.slice(0, -1).join(" "))})`;
          return config === EXACT_CONFIG ? `${head} && ${lastQuery}` : `tsquery_phrase(${head}, ${lastQuery})`;
        })
        .map((p) => `(${p})`)
        .join(` ${joiner} `),
    split,
  });
  // Only the last unit can be a prefix, and a prefix attempt asks for all units.
  const prefixed = attempt.prefix && attempt.matched === "all" && distinct.length > 1 && distinct.at(-1)!.prefix;
  return tsquery(distinct, prefixed ? { others: tsquery(distinct.slice(0, -1), null), prefix: tsquery(distinct.slice(-1), null) } : null);
}

/** The exact tier's condition; `impliesStemmed` when a chunk matching it matches the stemmed tsquery too. */
export interface ExactMatch {
  tsquery: Tsquery;
  impliesStemmed: boolean;
}

/**
 * What a chunk of the collection must match (the first parameter is the collection), its SQL
 * built with `param`. With `drives`, the index is asked for them and each of their rows is
 * checked for the whole tsquery by `ts_match_vq`, which is `@@` as a function call: the planner
 * never takes a function call to an index, so the prefix is not looked up there. A drive with no
 * lexeme (a unit the parser keeps no word of) would match nothing: then the whole tsquery is
 * looked up, as without a drive.
 */
export function chunkConditions(param: (value: unknown) => string, stemmedSql: () => string, exact: ExactMatch | null, drives: { stemmed: Tsquery; exact: Tsquery } | null): string[] {
  const matching = (column: string, sql: string, drive: Tsquery | undefined) => {
    if (!drive) return `${column} @@ (${sql})`;
    const others = drive.sql(param);
    return `${column} @@ (CASE WHEN numnode(${others}) > 0 THEN ${others} ELSE ${sql} END) AND ts_match_vq(${column}, ${sql})`;
  };
  const conditions = [IN_COLLECTION];
  if (!exact?.impliesStemmed) conditions.push(matching("c.tsv", stemmedSql(), drives?.stemmed));
  if (exact) conditions.push(matching("c.tsv_exact", exact.tsquery.sql(param), drives?.exact));
  return conditions;
}

/**
 * The exact tier's condition for an attempt. Words typed exactly are there stemmed too, so the
 * exact tier asks only for them (the planner would take the two conditions as independent and
 * misjudge how many chunks match); a phrase, a prefix or a token the parser may split into a
 * phrase is not implied.
 */
export function exactMatchOf(units: QueryUnit[], attempt: MatchAttempt): ExactMatch {
  const impliesStemmed = !attempt.prefix && units.every((u) => u.tokens.length === 1 && PLAIN_WORD.test(u.tokens[0]));
  return { tsquery: toTsquery(units, attempt, EXACT_CONFIG), impliesStemmed };
}
