import assert from "node:assert/strict";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import Database from "better-sqlite3";
import { IndexDamagedError } from "../../server/search/index-damage";
import { SqliteFtsIndex } from "../../server/search/sqlite";
import { ThreadedSqliteIndex } from "../../server/search/threaded-index";
import { scribble } from "../fixtures/damaged-file";
import { heronNote } from "../fixtures/note-documents";
import { countReaderChecks } from "../fixtures/reader-checks";

// Idle index threads do not keep a process alive (in the server its listening socket does): this does, meanwhile.
let alive: NodeJS.Timeout;
before(() => {
  alive = setInterval(() => undefined, 1000);
});
after(() => clearInterval(alive));

const root = fs.mkdtempSync(path.join(os.tmpdir(), "sluice-damage-"));
after(() => fs.rmSync(root, { recursive: true, force: true }));

const doc = (i: number) => heronNote(i, 40);

/** An index of two collections, written and closed (WAL folded into the file), as a stopped server leaves it. */
async function twoCollections(): Promise<{ dir: string; broken: string; sound: string }> {
  const dir = fs.mkdtempSync(path.join(root, "idx-"));
  const index = new SqliteFtsIndex({ dir });
  const broken = crypto.randomUUID();
  const sound = crypto.randomUUID();
  await index.upsertDocuments(broken, Array.from({ length: 200 }, (_, i) => doc(i)));
  await index.upsertDocuments(sound, Array.from({ length: 20 }, (_, i) => doc(i)));
  await index.close();
  return { dir, broken, sound };
}

describe("a damaged SQLite collection index", () => {
  it("a truncated file is found at open: stats say damaged, reads throw IndexDamagedError, other collections answer", async () => {
    const { dir, broken, sound } = await twoCollections();
    const file = path.join(dir, `${broken}.db`);
    fs.truncateSync(file, Math.floor(fs.statSync(file).size / 2));
    const index = new SqliteFtsIndex({ dir });
    try {
      assert.deepEqual(await index.stats(broken), { documentCount: 0, chunkCount: 0, indexStatus: "damaged" });
      await assert.rejects(index.search(broken, "heron3", 5), IndexDamagedError);
      await assert.rejects(index.listDocuments(broken, 0, 10), IndexDamagedError);
      await assert.rejects(index.indexedState(broken, "s1"), IndexDamagedError);
      assert.deepEqual(await index.stats(sound), { documentCount: 20, chunkCount: 20, indexStatus: "ok" });
      assert.equal((await index.search(sound, "heron3", 5))[0].path, "share/note-3.txt");
    } finally {
      await index.close();
    }
  });

  it("is checked once per open, not per request: a damaged collection is not read again until it is set aside", async () => {
    const { dir, broken } = await twoCollections();
    const file = path.join(dir, `${broken}.db`);
    const good = fs.readFileSync(file);
    scribble(file);
    const index = new SqliteFtsIndex({ dir });
    try {
      await assert.rejects(index.search(broken, "heron3", 5), IndexDamagedError);
      // The sound bytes back in place: still damaged, as nothing re-checks the file per request.
      fs.writeFileSync(file, good);
      await assert.rejects(index.search(broken, "heron3", 5), IndexDamagedError);
    } finally {
      await index.close();
    }
  });

  it("damage under an open file is found by the next statement that reads it; moveAside keeps the file and a rebuild starts afresh", async () => {
    const { dir, broken } = await twoCollections();
    const file = path.join(dir, `${broken}.db`);
    const index = new SqliteFtsIndex({ dir });
    try {
      assert.equal((await index.stats(broken)).indexStatus, "ok");
      scribble(file);
      // The connection's page cache would hide the damage until its pages are read again; another
      // connection's write (as the writer thread's) makes it read them from the file.
      const other = new Database(file);
      other.pragma("busy_timeout = 5000");
      try {
        other.exec("CREATE TABLE IF NOT EXISTS touched (x)");
      } catch {
        // the write itself may meet the damage; the point is the first connection's next read
      } finally {
        other.close();
      }
      await assert.rejects(index.search(broken, "heron3", 5), IndexDamagedError);
      assert.equal((await index.stats(broken)).indexStatus, "damaged");

      const aside = await index.moveAside(broken);
      assert.ok(aside && fs.existsSync(aside), "the damaged file is kept");
      assert.match(path.basename(aside), new RegExp(`^${broken}\\.damaged-.+\\.db$`));
      assert.equal(fs.existsSync(file), false);
      assert.deepEqual(await index.stats(broken), { documentCount: 0, chunkCount: 0, indexStatus: "ok" });
      await index.upsertDocuments(broken, [doc(7)]);
      assert.equal((await index.search(broken, "heron7", 5))[0].path, "share/note-7.txt");
    } finally {
      await index.close();
    }
  });
});

/**
 * quick_check reads every page of a file: run by the API's thread on a big collection it held up
 * every request for 0.2 to 0.4 s (issue 20 item 6). Counts the checks run on this thread (the
 * writer thread's own better-sqlite3 is not this one).
 */
function countChecksOnThisThread(): { count(): number; restore(): void } {
  const pragma = Database.prototype.pragma;
  let checks = 0;
  Database.prototype.pragma = function (this: Database.Database, source: string, options?: Database.PragmaOptions) {
    if (/quick_check/i.test(source)) checks += 1;
    return pragma.call(this, source, options);
  } as typeof pragma;
  return {
    count: () => checks,
    restore: () => {
      Database.prototype.pragma = pragma;
    },
  };
}

describe("the desktop's threaded index checks a file before its first read on a search reader thread: never the caller's, never behind the writer's", () => {
  it("reading existing files runs no quick_check on the caller's thread nor waits for the writer thread (a file opened here to write is checked, so the count sees one)", async () => {
    const { dir, sound } = await twoCollections();
    const checks = countChecksOnThisThread();
    const index = new ThreadedSqliteIndex({ dir, readers: { threads: 1, queueLimit: 8 }, searchCacheBytes: 0 });
    try {
      assert.deepEqual(await index.stats(sound), { documentCount: 20, chunkCount: 20, indexStatus: "ok" });
      assert.equal((await index.search(sound, "heron3", 5))[0].path, "share/note-3.txt");
      const page = await index.listDocuments(sound, 0, 5);
      assert.equal(page.total, 20);
      assert.equal((await index.indexedState(sound, "s1")).size, 20);
      assert.equal((await index.documentChunks(sound, page.items[0].documentId)).length, 1);
      assert.equal(checks.count(), 0);
      // No read asked the writer thread (it would wait behind a running job's batches): none was started.
      assert.equal((index as unknown as { worker: unknown }).worker, null);
      // The same file opened to write on this thread is checked here: the count would see a check.
      const writer = new SqliteFtsIndex({ dir });
      await writer.stats(sound);
      await writer.close();
      assert.equal(checks.count(), 1);
    } finally {
      checks.restore();
      await index.close();
    }
  });

  it("SqliteFtsIndex.check (what the reader thread runs): missing, older (no schema yet), current after a sound check, damaged", async () => {
    const { dir, broken, sound } = await twoCollections();
    scribble(path.join(dir, `${broken}.db`));
    const fresh = crypto.randomUUID();
    const reader = new SqliteFtsIndex({ dir, readOnly: true });
    try {
      assert.equal(await reader.check(fresh), "missing");
      new Database(path.join(dir, `${fresh}.db`)).close();
      assert.equal(await reader.check(fresh), "older");
      assert.equal(await reader.check(sound), "current");
      await assert.rejects(reader.check(broken), IndexDamagedError);
      await assert.rejects(reader.search(broken, "heron3", 5), IndexDamagedError);
    } finally {
      await reader.close();
    }
  });

  it("a damaged file is still found before its first read (by a reader thread): listed as damaged, its reads refused, the others answer", async () => {
    const { dir, broken, sound } = await twoCollections();
    scribble(path.join(dir, `${broken}.db`));
    const checks = countChecksOnThisThread();
    const index = new ThreadedSqliteIndex({ dir, readers: { threads: 1, queueLimit: 8 }, searchCacheBytes: 0 });
    try {
      assert.deepEqual(await index.stats(broken), { documentCount: 0, chunkCount: 0, indexStatus: "damaged" });
      await assert.rejects(index.search(broken, "heron3", 5), IndexDamagedError);
      await assert.rejects(index.listDocuments(broken, 0, 10), IndexDamagedError);
      await assert.rejects(index.indexedState(broken, "s1"), IndexDamagedError);
      await assert.rejects(index.documentChunks(broken, crypto.randomUUID()), IndexDamagedError);
      assert.deepEqual(await index.stats(sound), { documentCount: 20, chunkCount: 20, indexStatus: "ok" });
      assert.equal(checks.count(), 0);
    } finally {
      checks.restore();
      await index.close();
    }
  });
});

describe("a file is quick_checked once per process: a reader thread's check stands for the writer's", () => {
  it("the writer opening a file a reader just found sound skips its own check; any other open still checks", async () => {
    const { dir, sound } = await twoCollections();
    const checks = countChecksOnThisThread();
    try {
      const trusting = new SqliteFtsIndex({ dir });
      trusting.trustChecked([sound]);
      assert.equal((await trusting.stats(sound)).documentCount, 20);
      await trusting.close();
      assert.equal(checks.count(), 0);
      // Only the latest word counts: a file trusted before is not trusted after.
      const later = new SqliteFtsIndex({ dir });
      later.trustChecked([sound]);
      later.trustChecked([]);
      assert.equal((await later.stats(sound)).documentCount, 20);
      await later.close();
      assert.equal(checks.count(), 1);
    } finally {
      checks.restore();
    }
  });

  it("a job's channel to the writer carries its collection when a reader thread has checked the file in this process", async () => {
    const { dir, sound } = await twoCollections();
    const fresh = crypto.randomUUID();
    const index = new ThreadedSqliteIndex({ dir, readers: { threads: 1, queueLimit: 8 }, searchCacheBytes: 0 });
    const sent: unknown[] = [];
    const { Worker } = await import("node:worker_threads");
    const post = Worker.prototype.postMessage;
    Worker.prototype.postMessage = function (this: InstanceType<typeof Worker>, message: unknown, transfer?: never) {
      // The writer's `connect` note (threads/rpc.ts): args are the job's port and the collections a reader checked.
      const call = message as { method?: unknown; args?: unknown[] } | null;
      if (call && typeof call === "object" && call.method === "connect") sent.push(call.args?.[1]);
      return post.call(this, message, transfer);
    };
    try {
      await index.stats(sound); // the first read: a reader thread checks the file
      await index.stats(fresh); // no file: nothing checked
      index.writerPort(sound).close();
      index.writerPort(fresh).close();
      assert.deepEqual(sent, [[sound], []]);
    } finally {
      Worker.prototype.postMessage = post;
      await index.close();
    }
  });
});

describe("a file this process's writer wrote needs no reader's check (decision 0541)", () => {
  it("the first search after a job's end (settleWrites) sends no check to a reader thread; another process's first read still does", async () => {
    const dir = fs.mkdtempSync(path.join(root, "written-"));
    const collection = crypto.randomUUID();
    const checks = countReaderChecks();
    const writing = new ThreadedSqliteIndex({ dir, readers: { threads: 1, queueLimit: 8 }, searchCacheBytes: 0 });
    try {
      await writing.upsertDocuments(collection, Array.from({ length: 20 }, (_, i) => doc(i)));
      await writing.settleWrites(collection);
      // Right after the job's end: the settle (and its clean mark) may still be to come.
      assert.equal((await writing.search(collection, "heron7", 5))[0]?.path, "share/note-7.txt");
      assert.equal(checks.count(), 0, "the writer's file was trusted");
    } finally {
      await writing.close();
    }
    // A process that did not write it (a restart) reads it as any file: checked first.
    const another = new ThreadedSqliteIndex({ dir, readers: { threads: 1, queueLimit: 8 }, searchCacheBytes: 0 });
    try {
      assert.equal((await another.search(collection, "heron7", 5))[0]?.path, "share/note-7.txt");
      assert.equal(checks.count(), 1);
    } finally {
      await another.close();
      checks.restore();
    }
  });
});
