import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import crypto from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import Database from "better-sqlite3";
import { SqliteFtsIndex } from "../../server/search/sqlite";
import { IndexDamagedError } from "../../server/search/index-damage";
import { cleanMarkPath } from "../../server/search/sqlite/sqlite-fts-clean-mark";
import { heronNote } from "../fixtures/note-documents";
import { scribble } from "../fixtures/damaged-file";

// A job's end on the SQLite engine (settleWrites): the fragmented full-text tables optimized, the
// file marked clean; an open of a file as its mark says skips quick_check (decisions 0501, 0502).

const root = fs.mkdtempSync(path.join(os.tmpdir(), "sluice-settle-"));
const closers: Array<() => Promise<void>> = [];
after(async () => {
  for (const close of closers) await close();
  fs.rmSync(root, { recursive: true, force: true });
});

const doc = (i: number) => heronNote(i);

function newIndex(options: Partial<ConstructorParameters<typeof SqliteFtsIndex>[0]> = {}, dir = fs.mkdtempSync(path.join(root, "idx-"))): { index: SqliteFtsIndex; dir: string } {
  const index = new SqliteFtsIndex({ dir, ...options });
  closers.push(() => index.close());
  return { index, dir };
}

/** Each full-text table's segments, counted on a connection of the test's by another way than the engine's (its structure record). */
function segments(file: string): { chunks_fts: number; chunks_exact: number } {
  const db = new Database(file, { readonly: true });
  try {
    const count = (table: string) => {
      // The distinct segment ids of the pages FTS5 stores: a page's rowid holds its segment's id from bit 37 up (FTS5_SEGMENT_ROWID in fts5_index.c).
      const ids = db.prepare(`SELECT DISTINCT (id >> 37) FROM ${table}_data WHERE id > 10`).pluck().all() as number[];
      return ids.filter((id) => id > 0).length;
    };
    return { chunks_fts: count("chunks_fts"), chunks_exact: count("chunks_exact") };
  } finally {
    db.close();
  }
}

/** A collection written one small batch (one commit, one new segment) at a time, as a slow source's job writes it. */
async function writtenInSmallBatches(index: SqliteFtsIndex, collection: string, batches: number): Promise<void> {
  for (let i = 0; i < batches; i++) await index.upsertDocuments(collection, [doc(i)]);
}

describe("SQLite: a job's end (settleWrites)", () => {
  it("a collection written in many small batches ends with one segment per full-text table", async () => {
    const { index } = newIndex();
    const collection = crypto.randomUUID();
    await writtenInSmallBatches(index, collection, 30);
    const before = segments(index.filePath(collection));
    assert.ok(before.chunks_fts > 4 && before.chunks_exact > 4, `many segments before: ${JSON.stringify(before)}`);
    const settled = await index.settleWrites(collection);
    assert.deepEqual(settled.optimized, ["chunks_fts", "chunks_exact"]);
    assert.deepEqual(segments(index.filePath(collection)), { chunks_fts: 1, chunks_exact: 1 });
    assert.equal((await index.search(collection, "heron17", 5))[0]?.path, "share/note-17.txt");
  });

  it("a few segments are left as they are", async () => {
    const { index } = newIndex();
    const collection = crypto.randomUUID();
    await writtenInSmallBatches(index, collection, 2);
    const before = segments(index.filePath(collection));
    assert.deepEqual((await index.settleWrites(collection)).optimized, []);
    assert.deepEqual(segments(index.filePath(collection)), before);
  });

  it("a no-change re-run (nothing written since the file was opened) runs no optimize, however many segments", async () => {
    const { index: first, dir } = newIndex();
    const collection = crypto.randomUUID();
    await writtenInSmallBatches(first, collection, 30);
    await first.close(); // the job that wrote ended without its settle (a stopped process)
    const before = segments(first.filePath(collection));
    assert.ok(before.chunks_fts > 4);
    const { index: rerun } = newIndex({}, dir);
    await rerun.removeUnfinished(collection); // what every job's start does: no orphans, no write
    await rerun.indexedState(collection, "s1");
    const settled = await rerun.settleWrites(collection);
    assert.deepEqual(settled, { optimized: [], marked: false });
    assert.deepEqual(segments(rerun.filePath(collection)), before);
    assert.equal(fs.existsSync(cleanMarkPath(rerun.filePath(collection))), false);
  });
});

describe("SQLite: the clean mark and quick_check at open", () => {
  /** A collection written and settled by one index (the writer), then that index closed, as a stopped server leaves it. */
  async function settledAndClosed(): Promise<{ dir: string; collection: string; file: string }> {
    const { index, dir } = newIndex();
    const collection = crypto.randomUUID();
    await index.upsertDocuments(collection, Array.from({ length: 50 }, (_, i) => doc(i)));
    assert.equal((await index.settleWrites(collection)).marked, true);
    await index.close();
    return { dir, collection, file: index.filePath(collection) };
  }

  /** A checking reader (as a search reader thread's first look) that records the quick_checks it runs. */
  function checkingReader(dir: string): { index: SqliteFtsIndex; checks: string[] } {
    const checks: string[] = [];
    const { index } = newIndex({ readOnly: true, onQuickCheck: (file) => checks.push(file) }, dir);
    return { index, checks };
  }

  it("a file as its writer left it after a clean job is opened without quick_check", async () => {
    const { dir, collection, file } = await settledAndClosed();
    assert.ok(fs.existsSync(cleanMarkPath(file)));
    const { index, checks } = checkingReader(dir);
    assert.equal(await index.check(collection), "current");
    assert.equal((await index.search(collection, "heron7", 5))[0]?.path, "share/note-7.txt");
    assert.deepEqual(checks, []);
    // The writer's own open of the file trusts the mark too.
    const writerChecks: string[] = [];
    const { index: writer } = newIndex({ onQuickCheck: (f) => writerChecks.push(f) }, dir);
    await writer.indexedState(collection, "s1");
    assert.deepEqual(writerChecks, []);
  });

  it("a file damaged after its mark was written (its identity changed) is checked at open and found damaged; the mark goes", async () => {
    const { dir, collection, file } = await settledAndClosed();
    scribble(file);
    const { index, checks } = checkingReader(dir);
    await assert.rejects(index.check(collection), IndexDamagedError);
    assert.deepEqual(checks, [file]);
    assert.equal(fs.existsSync(cleanMarkPath(file)), false, "a damage verdict removes the mark");
  });

  it("a file put back with its old size and modification time still differs (its ctime) and is checked", async () => {
    const { dir, collection, file } = await settledAndClosed();
    const { mtime } = fs.statSync(file);
    scribble(file);
    fs.utimesSync(file, mtime, mtime);
    const { index, checks } = checkingReader(dir);
    await assert.rejects(index.check(collection), IndexDamagedError);
    assert.deepEqual(checks, [file]);
  });

  it("a write removes the mark before it commits; the next settle writes it again", async () => {
    const { dir, collection, file } = await settledAndClosed();
    const { index: writer } = newIndex({}, dir);
    await writer.upsertDocuments(collection, [doc(99)]);
    assert.equal(fs.existsSync(cleanMarkPath(file)), false);
    const { index, checks } = checkingReader(dir);
    assert.equal(await index.check(collection), "current");
    assert.deepEqual(checks, [file], "no mark: the check runs as before");
    assert.equal((await writer.settleWrites(collection)).marked, true);
    assert.ok(fs.existsSync(cleanMarkPath(file)));
  });

  it("a file without a mark (an older build's, or a job that never ended) is checked as before", async () => {
    const { index: writer, dir } = newIndex();
    const collection = crypto.randomUUID();
    await writer.upsertDocuments(collection, [doc(1)]);
    await writer.close();
    const { index, checks } = checkingReader(dir);
    assert.equal(await index.check(collection), "current");
    assert.deepEqual(checks, [writer.filePath(collection)]);
  });
});
