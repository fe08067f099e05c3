import assert from "node:assert/strict";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { after, describe, it } from "node:test";
import { heronNote } from "../fixtures/note-documents";
import { cleanMarkPath } from "../../server/search/sqlite/sqlite-fts-clean-mark";
import { MAX_SEGMENTS_KEPT, segmentCounts } from "../../server/search/sqlite/sqlite-fts-segments";
import { ThreadedSqliteIndex } from "../../server/search/threaded-index";
import Database from "better-sqlite3";
import { tempDir } from "../fixtures/sluice-server";
import { waitFor } from "../fixtures/wait-for";

// The writer thread answers a job's end at once and settles the file right after (decision 0536);
// letting go of the file first drops the settle, so no connection is left on a deleted file.

const dir = tempDir("sluice-settle-after-");
const indexes: ThreadedSqliteIndex[] = [];
// The writer thread is unref'd (it must not keep the app alive): here a timer keeps the test's process up while it answers.
const keepAlive = setInterval(() => undefined, 1000);
after(async () => {
  for (const index of indexes) await index.close();
  clearInterval(keepAlive);
});

const doc = (i: number) => heronNote(i);

function newIndex(): ThreadedSqliteIndex {
  const index = new ThreadedSqliteIndex({ dir, readers: { threads: 1, queueLimit: 8 }, searchCacheBytes: 0 });
  indexes.push(index);
  return index;
}

/** The collection file's segments per table, read on a connection of the test's. */
function segmentsOf(file: string) {
  const db = new Database(file, { readonly: true });
  try {
    return segmentCounts(db);
  } finally {
    db.close();
  }
}

/** This process's open files that are a deleted file of `collectionId` (the writer thread's descriptors are the process's). */
function deletedFilesHeld(collectionId: string): string[] {
  const held: string[] = [];
  for (const fd of fs.readdirSync("/proc/self/fd")) {
    try {
      const target = fs.readlinkSync(path.join("/proc/self/fd", fd));
      if (target.includes(collectionId) && target.endsWith("(deleted)")) held.push(target);
    } catch {
      // closed meanwhile
    }
  }
  return held;
}

describe("the index writer thread: a job's end answered before its settle", { skip: process.platform !== "linux" ? "reads /proc/self/fd" : false }, () => {
  it("the answer comes first; the settle follows on its own: the mark, at most 4 segments, the file still searchable", async () => {
    const index = newIndex();
    const collection = crypto.randomUUID();
    // One small batch per commit, as a slow source writes: more segments than the settle keeps.
    for (let i = 0; i < 12; i++) await index.upsertDocuments(collection, [doc(i)]);
    const file = path.join(dir, `${collection}.db`);
    assert.ok(segmentsOf(file).chunks_fts > MAX_SEGMENTS_KEPT, JSON.stringify(segmentsOf(file)));
    assert.equal(await index.settleWrites(collection), undefined, "answered without the settle's outcome");
    await waitFor(() => fs.existsSync(cleanMarkPath(file)), "the clean mark after the settle");
    const settled = segmentsOf(file);
    assert.ok(settled.chunks_fts <= MAX_SEGMENTS_KEPT && settled.chunks_exact <= MAX_SEGMENTS_KEPT, JSON.stringify(settled));
    assert.equal((await index.search(collection, "heron7", 5))[0]?.path, "share/note-7.txt");
  });

  it("a collection dropped right after a job's end: its settle does not open the file again, nothing holds the deleted file", async () => {
    const index = newIndex();
    // The release reaches the writer before the settle has run only now and then: tried ten times.
    for (let round = 0; round < 10; round++) {
      const collection = crypto.randomUUID();
      for (let i = 0; i < 3; i++) await index.upsertDocuments(collection, [doc(i)]);
      // Not awaited: the drop's release may reach the writer before the settle has run.
      const ended = index.settleWrites(collection);
      await index.drop(collection);
      await ended;
      // A call answered by the writer after both: any settle still scheduled then has run.
      await index.upsertDocuments(crypto.randomUUID(), [doc(99)]);
      const file = path.join(dir, `${collection}.db`);
      assert.equal(fs.existsSync(file), false);
      assert.equal(fs.existsSync(cleanMarkPath(file)), false, "no mark for a dropped file");
      assert.deepEqual(deletedFilesHeld(collection), [], `round ${round}`);
    }
  });
});
