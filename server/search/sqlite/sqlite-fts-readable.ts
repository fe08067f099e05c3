import { capPerDocument, spreadPerDocument } from "../query";
import type { RankedRow } from "./sqlite-ranked-row";

/**
 * A ranking's page under a permission filter, from its window's best rows
 * (docs/decisions/0487-permission-filter-after-the-window.md): the window is ranked as without
 * permissions, and readability is checked on its best rows only, in rank order, deeper while the
 * page is short. A page short of `limit` from a full window is the caller's to rank again with the
 * permissions in the walk (null here), so a person still gets `limit` readable rows when that many exist.
 */

/** One of a window's best rows with its document's ACL (`known` 0: no document row, so nothing to show). */
export interface WindowRow {
  rowid: number;
  bm25: number;
  document_id: string | null;
  known: number;
  acl: string | null;
}

/** The per-document rules a page keeps (RankScope's). */
export interface PageShape {
  perDocument: number | undefined;
  firstPerDocument: number | undefined;
}

/** How many times the page's rows are read first, and how much deeper each next read goes. */
const READABLE_DEPTH = 4;

/**
 * The page from `best(depth)` (the window's best `depth` rows, best first), or null when the whole
 * window was read, it was full (`window` rows: older matches were left out of it) and fewer than
 * `limit` of its rows are readable after the per-document rules. A window short of `window`
 * rows held every match, so its readable rows are all there are.
 */
export function readablePage(
  best: (depth: number) => WindowRow[],
  readable: ReadonlySet<string>,
  limit: number,
  shape: PageShape,
  window: number,
): RankedRow[] | null {
  const documentOf = (row: RankedRow) => row.document_id!;
  // A document's chunks are all readable or none, so a row's rank within its document is the
  // same among the readable rows as among all: the cap and the spread apply to the readable rows as to a filtered walk's.
  const cap = shape.perDocument ?? shape.firstPerDocument;
  for (let depth = limit * READABLE_DEPTH; ; depth *= READABLE_DEPTH) {
    const asked = Math.min(depth, window);
    const rows = best(asked);
    const kept: RankedRow[] = rows
      .filter((row) => row.known === 1 && (row.acl === null || readable.has(row.acl)))
      .map((row) => ({ rowid: row.rowid, bm25: row.bm25, document_id: row.document_id! }));
    // Any row below the ones read ranks below every one of them: once `limit` rows pass the cap
    // (with a spread, are among their document's first), deeper rows cannot enter the page.
    const enough = capPerDocument(kept, cap, documentOf).length >= limit;
    const page = (shape.perDocument !== undefined ? capPerDocument(kept, shape.perDocument, documentOf) : spreadPerDocument(kept, shape.firstPerDocument, documentOf)).slice(0, limit);
    if (enough) return page;
    const wholeWindow = rows.length < asked || asked >= window;
    if (!wholeWindow) continue;
    return page.length < limit && rows.length >= window ? null : page;
  }
}
