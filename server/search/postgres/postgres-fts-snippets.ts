import { MARK_CLOSE, MARK_OPEN, markSnippet } from "../query";
import { CONFIG } from "./postgres-fts-schema";
import { words } from "./postgres-fts-words";

/**
 * Snippets in the shape of the SQLite engine's: ts_headline marks every match of a chunk's
 * words; the marks are put back on the original text, cut to SNIPPET_WORDS words around the
 * first, and neighbouring marks joined into phrases.
 */

const HEADLINE = `StartSel=${MARK_OPEN}, StopSel=${MARK_CLOSE}, HighlightAll=true`;
const SNIPPET_WORDS = 20;

/** The headline of the chunk `c` for the tsquery `tsquery` (SQL): its words with the matches between the sentinels. */
export function headlineSql(tsquery: string): string {
  return `ts_headline('${CONFIG}', ${words("c.body")}, ${tsquery}, '${HEADLINE}')`;
}

/** A hit's snippet from its chunk's headline (null: none) and whole text; `phraseLength`: the query's longest phrase, in words. */
export function markedSnippet(headline: string | null, body: string, phraseLength: number): string {
  return markSnippet(joinMarks(snippetWindow(restore(headline ?? "", body)), phraseLength));
}

/** The headline was made from the text with SEPARATORS as spaces: put the original characters back around the marks. */
function restore(marked: string, original: string): string {
  let out = "";
  let i = 0;
  for (let k = 0; k < marked.length; k++) {
    const ch = marked[k];
    if (ch === MARK_OPEN || ch === MARK_CLOSE) out += ch;
    else out += original[i++] ?? "";
  }
  // Alignment holds when ts_headline reproduced the whole text; if it ever did not, keep its own output.
  return i === original.length ? out : marked;
}

const SNIPPET_WORD = /[\p{L}\p{N}\p{M}\p{Co}\p{So}\uE000\uE001]+/gu;

/**
 * ts_headline marks every match of the whole chunk; this keeps SNIPPET_WORDS words around the
 * first one, with "…" where text was cut, the shape of FTS5's snippet(). Marks cut by the
 * window are closed or reopened so they stay balanced.
 */
function snippetWindow(marked: string): string {
  const words = [...marked.matchAll(SNIPPET_WORD)].map((m) => ({ start: m.index, end: m.index + m[0].length }));
  if (words.length <= SNIPPET_WORDS) return marked;
  const firstMark = marked.indexOf(MARK_OPEN);
  const hit = Math.max(0, words.findIndex((w) => w.end > firstMark));
  const first = Math.min(Math.max(0, hit - 5), words.length - SNIPPET_WORDS);
  const last = first + SNIPPET_WORDS - 1;
  const from = first === 0 ? 0 : words[first].start;
  const to = last === words.length - 1 ? marked.length : words[last].end;
  const before = marked.slice(0, from);
  const openBefore = before.lastIndexOf(MARK_OPEN) > before.lastIndexOf(MARK_CLOSE);
  let text = (openBefore ? MARK_OPEN : "") + marked.slice(from, to);
  if (text.lastIndexOf(MARK_OPEN) > text.lastIndexOf(MARK_CLOSE)) text += MARK_CLOSE;
  return `${first > 0 ? "…" : ""}${text}${to < marked.length ? "…" : ""}`;
}

/**
 * ts_headline marks each word, FTS5 marks each phrase match as a whole. Neighbouring marks
 * (only punctuation or space between) are merged up to the longest phrase of the query, so
 * "<m>quarterly</m> <m>budget</m>" becomes one mark for a quoted phrase and stays two for two terms.
 */
function joinMarks(raw: string, phraseLength: number): string {
  if (phraseLength < 2) return raw;
  let words = 1;
  const pattern = new RegExp(`${MARK_CLOSE}([^\\p{L}\\p{N}${MARK_OPEN}${MARK_CLOSE}]+)${MARK_OPEN}|${MARK_OPEN}`, "gu");
  return raw.replace(pattern, (match: string, between: string | undefined) => {
    if (between !== undefined && words < phraseLength) {
      words++;
      return between;
    }
    words = 1;
    return match;
  });
}
