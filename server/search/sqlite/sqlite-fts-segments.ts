import type Database from "better-sqlite3";

/**
 * A job's end folds an FTS5 table's segments into one when it has more than this many: every
 * MATCH merges one doclist per segment holding the word, and a collection written in many small
 * batches keeps many segments (FTS5's automerge leaves up to 3 per level). At or below it, the
 * 'optimize' (a rewrite of the whole table) costs more than it saves
 * (docs/decisions/0501-fts5-optimize-at-a-jobs-end.md).
 */
export const MAX_SEGMENTS_KEPT = 4;

/** The full-text tables a job writes. */
const TABLES = ["chunks_fts", "chunks_exact"] as const;

/** The first bytes of FTS5's newer ("V2") structure record, after the 4-byte cookie. */
const STRUCTURE_V2 = [0xff, 0x00, 0x00, 0x01];

/** The id of FTS5's structure record in `<table>_data` (FTS5_STRUCTURE_ROWID in fts5_index.c). */
const STRUCTURE_ROWID = 10;

/**
 * How many segments a table's index has, read from its structure record: a 4-byte cookie, the
 * V2 marker when present, then the number of levels and the number of segments as varints.
 * One row read, not a scan.
 */
export function segmentCount(db: Database.Database, table: (typeof TABLES)[number]): number {
  const block = db.prepare(`SELECT block FROM ${table}_data WHERE id = ?`).pluck().get(STRUCTURE_ROWID) as Buffer | undefined;
  if (!block || block.length < 4) return 0;
  let at = 4;
  if (STRUCTURE_V2.every((byte, i) => block[4 + i] === byte)) at += 4;
  const levels = readVarint(block, at);
  return readVarint(block, levels.next).value;
}

/** Segments of each full-text table, by table. */
export function segmentCounts(db: Database.Database): Record<(typeof TABLES)[number], number> {
  return { chunks_fts: segmentCount(db, "chunks_fts"), chunks_exact: segmentCount(db, "chunks_exact") };
}

/** Runs 'optimize' on each full-text table with more than MAX_SEGMENTS_KEPT segments; answers the tables optimized. */
export function optimizeFragmented(db: Database.Database): string[] {
  const optimized: string[] = [];
  for (const table of TABLES) {
    if (segmentCount(db, table) <= MAX_SEGMENTS_KEPT) continue;
    db.prepare(`INSERT INTO ${table} (${table}) VALUES ('optimize')`).run();
    optimized.push(table);
  }
  return optimized;
}

/** SQLite's varint (as FTS5 writes it): big-endian groups of 7 bits, the high bit set on all but the last; a 9th byte keeps all 8. */
function readVarint(bytes: Buffer, at: number): { value: number; next: number } {
  let value = 0;
  for (let i = 0; i < 9; i++) {
    const byte = bytes[at + i] ?? 0;
    if (i === 8) return { value: value * 256 + byte, next: at + 9 };
    value = value * 128 + (byte & 0x7f);
    if ((byte & 0x80) === 0) return { value, next: at + i + 1 };
  }
  return { value, next: at + 9 };
}
