/**
 * What every search engine shares: turning user input into query units (never engine
 * syntax), the snippet contract (HTML-escaped, matches in <mark>), the attempts and the per-document rules.
 */

export const MAX_TOP_K = 100;
const MAX_QUERY_UNITS = 16;
const MAX_QUERY_CHARS = 1000;

// Private-use sentinels the engine puts around matches. They are stripped from indexed
// text, so after HTML-escaping the snippet, they are the only source of <mark> tags.
export const MARK_OPEN = "\uE000";
export const MARK_CLOSE = "\uE001";
const SENTINELS = /[\uE000\uE001]/g;

/** top_k as the engines take it: an integer from 1 to MAX_TOP_K. */
export function clampTopK(topK: number): number {
  return Math.min(MAX_TOP_K, Math.max(1, Math.floor(Number.isFinite(topK) ? topK : 1)));
}

/** Indexed text never carries the snippet sentinels, so content cannot forge a <mark>. */
export function clean(text: string): string {
  return text.replace(SENTINELS, "");
}

const HTML_ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]);
}

/** Escape everything, then turn the sentinels (and only them) into <mark> tags. */
export function markSnippet(raw: string): string {
  return escapeHtml(raw).replaceAll(MARK_OPEN, "<mark>").replaceAll(MARK_CLOSE, "</mark>");
}

/** One query unit: the tokens of a term or a phrase; `prefix` when it may be an unfinished word. */
export interface QueryUnit {
  tokens: string[];
  prefix: boolean;
}

// What the query parser treats as word characters: letters, digits, marks, private use and
// other symbols (emoji), roughly what unicode61 keeps. FTS5 re-tokenizes every quoted unit,
// so a mismatch here only changes how a word splits, never the query's syntax.
const WORD = /[\p{L}\p{N}\p{Co}\p{So}][\p{L}\p{N}\p{M}\p{Co}\p{So}]*/gu;

/**
 * Turns user input into query units, never FTS5 syntax: "quoted text" is a phrase, every
 * other whitespace-separated piece is a term (or a phrase when punctuation splits it, as
 * "e-mail" was split when indexed). Operators, column filters and punctuation are just words
 * or dropped. The last unquoted term may be an unfinished word unless the query ends in a space.
 */
export function parseQuery(query: string): QueryUnit[] {
  const text = query.slice(0, MAX_QUERY_CHARS);
  const units: QueryUnit[] = [];
  let lastWasQuoted = false;
  for (const match of text.matchAll(/"([^"]*)"|[^\s"]+/g)) {
    const quoted = match[1] !== undefined;
    const tokens = (match[1] ?? match[0]).match(WORD) ?? [];
    if (tokens.length === 0) continue;
    units.push({ tokens, prefix: false });
    lastWasQuoted = quoted;
  }
  const last = units.at(-1);
  if (last && !lastWasQuoted && !/\s$/.test(text) && last.tokens.at(-1)!.length >= 3) last.prefix = true;
  return units.slice(0, MAX_QUERY_UNITS);
}


/** One way of asking for the units: all of them (AND) or any (OR), the last one as a prefix or not. */
export interface MatchAttempt {
  joiner: " AND " | " OR ";
  prefix: boolean;
  matched: "all" | "any";
}

/**
 * What both engines try, in order, until one finds something: all terms; then, if the last
 * word may be unfinished, it as a prefix (a prefix merges many doclists, too slow to do every
 * time); then any term (the result says so: `matched: "any"`).
 */
export function matchAttempts(units: QueryUnit[]): MatchAttempt[] {
  const attempts: MatchAttempt[] = [{ joiner: " AND ", prefix: false, matched: "all" }];
  if (units.at(-1)?.prefix) attempts.push({ joiner: " AND ", prefix: true, matched: "all" });
  if (units.length > 1) attempts.push({ joiner: " OR ", prefix: false, matched: "any" });
  return attempts;
}

/** A folder filter ("share/sub", normalised by the route) as the path prefix of the documents under it. */
export function folderPrefix(folder: string): string {
  return `${folder}/`;
}

/** Keeps, in order, at most `perDocument` rows of each document (none dropped without a cap): the exact and stemmed tiers are capped together. */
export function capPerDocument<T>(rows: T[], perDocument: number | undefined, documentOf: (row: T) => string): T[] {
  if (perDocument === undefined) return rows;
  const counts = new Map<string, number>();
  return rows.filter((row) => {
    const n = (counts.get(documentOf(row)) ?? 0) + 1;
    counts.set(documentOf(row), n);
    return n <= perDocument;
  });
}

/**
 * Keeps every row but moves each document's rows past its first `firstPerDocument` behind the
 * other documents' rows (a stable partition, order kept on each side), so one long document
 * cannot fill a page and nothing is dropped. Without it, the rows as they are.
 */
export function spreadPerDocument<T>(rows: T[], firstPerDocument: number | undefined, documentOf: (row: T) => string): T[] {
  if (firstPerDocument === undefined) return rows;
  const counts = new Map<string, number>();
  const first: T[] = [];
  const later: T[] = [];
  for (const row of rows) {
    const n = (counts.get(documentOf(row)) ?? 0) + 1;
    counts.set(documentOf(row), n);
    (n <= firstPerDocument ? first : later).push(row);
  }
  return [...first, ...later];
}
