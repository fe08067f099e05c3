import type Database from "better-sqlite3";
import { MARK_CLOSE, MARK_OPEN } from "../query";
import { prepared } from "./sqlite-statements";

/** Words of a snippet: FTS5's snippet() around the match, or a chunk's start when there is nothing to mark. */
const SNIPPET_TOKENS = 20;

/** A chunk's snippet (sentinels around the matches, null when none was marked) and its whole text. */
export interface ChunkSnippet {
  snippet: string | null;
  body: string | null;
}

/**
 * The marked snippet and whole text of the chunks kept, by rowid; snippet() runs only for
 * them, not for every match the ranking looked at. One statement per chunk, each a seek to its
 * rowid; but FTS5 merges a prefix's doclists again for every statement (~3 ms each for a short
 * prefix at 100,000 chunks), so with a prefix one statement walks the rowids' range once and
 * keeps those asked for.
 */
export function snippetsOf(db: Database.Database, match: string, rowids: number[], prefixed: boolean): Map<number, ChunkSnippet> {
  const found = new Map<number, ChunkSnippet>();
  if (rowids.length === 0) return found;
  const columns = `rowid, snippet(chunks_fts, 2, '${MARK_OPEN}', '${MARK_CLOSE}', '…', ${SNIPPET_TOKENS}) AS snippet, body`;
  type Row = { rowid: number; snippet: string | null; body: string | null };
  if (prefixed) {
    // The unary + leaves the list a filter: FTS5 walks the range once instead of seeking (and merging) per rowid.
    const sql = `SELECT ${columns} FROM chunks_fts WHERE chunks_fts MATCH ? AND rowid BETWEEN ? AND ? AND +rowid IN (${rowids.map(() => "?").join(", ")})`;
    const rows = prepared(db, sql).all(match, BigInt(Math.min(...rowids)), BigInt(Math.max(...rowids)), ...rowids.map(BigInt)) as Row[];
    for (const row of rows) found.set(row.rowid, row);
    return found;
  }
  // The rowid goes in as a BigInt (an SQLite integer): better-sqlite3 binds a JS number as
  // a REAL, and FTS5 ignores a `rowid = REAL` constraint, answering every match's first row.
  const one = prepared(db, `SELECT ${columns} FROM chunks_fts WHERE chunks_fts MATCH ? AND rowid = ?`);
  for (const rowid of rowids) {
    const row = one.get(match, BigInt(rowid)) as Row | undefined;
    if (row) found.set(rowid, row);
  }
  return found;
}

/** The first SNIPPET_TOKENS words of a chunk, for a hit with nothing to mark. */
export function chunkStart(text: string): string {
  const words = text.split(/\s+/).filter(Boolean);
  return words.length > SNIPPET_TOKENS ? `${words.slice(0, SNIPPET_TOKENS).join(" ")}…` : words.join(" ");
}
