import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import crypto from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import Database from "better-sqlite3";
import { SqliteFtsIndex } from "../../server/search/sqlite-fts-index";
import { ThreadedSqliteIndex } from "../../server/search/threaded-index";
import { EXACT_QUEUE_BATCHES, ThreadedExactWriter } from "../../server/search/exact-writer";
import { exactPathOf } from "../../server/search/exact-file";
import type { DocumentInput, SearchHit, SearchIndex } from "../../server/search/search-index";

// The exact-words table in a file of its own (exact-file.ts): written on its own thread, kept in
// step by a sequence number, rebuilt from the collection's file when it is not.

const tempDirs: string[] = [];
const closers: (() => Promise<void>)[] = [];
// Idle index threads do not keep a process alive (in the server its listening socket does): this does, meanwhile.
let alive: NodeJS.Timeout;
before(() => {
  alive = setInterval(() => undefined, 1000);
});
after(async () => {
  clearInterval(alive);
  for (const close of closers) await close();
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
});

const SOURCE = "8f0c2a4e-5d1b-4c3a-9e7f-0a1b2c3d4e5f";

function newDir(): string {
  const dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "sluice-exact-")), "indexes");
  tempDirs.push(path.dirname(dir));
  return dir;
}

function doc(p: string, texts: string[]): DocumentInput {
  return {
    sourceId: SOURCE,
    path: p,
    title: path.basename(p),
    size: texts.join("").length,
    modifiedAt: new Date("2024-05-01T10:00:00.000Z"),
    version: null,
    chunks: texts.map((text, chunkIndex) => ({ chunkIndex, text })),
  };
}

function index(dir: string, options: Partial<ConstructorParameters<typeof SqliteFtsIndex>[0]> = {}): SqliteFtsIndex {
  const made = new SqliteFtsIndex({ dir, ...options });
  closers.push(() => made.close());
  return made;
}

/** What a page of hits says, the way the API shows it. */
function seqs(file: string): { main: number; exact: number } {
  const main = new Database(file, { readonly: true });
  const exact = new Database(exactPathOf(file), { readonly: true });
  try {
    return {
      main: main.prepare("SELECT exact_seq FROM index_state").pluck().get() as number,
      exact: exact.prepare("SELECT seq FROM exact_state").pluck().get() as number,
    };
  } finally {
    main.close();
    exact.close();
  }
}

const QUERIES = ["highlighter", "highlight", "pens paper", '"yellow highlighter"', "highl", "markers OR pens", "zebra"];

/** The same writes, in the same order, to an index: replaced and removed documents and a staged one included. */
async function writeSample(target: SearchIndex, collection: string): Promise<void> {
  const docs = Array.from({ length: 12 }, (_, i) => doc(`common/${i}.txt`, [`highlights highlighted highlight ${i}`, `second chunk about zebra ${i}`]));
  await target.upsertDocuments(collection, docs.slice(0, 6));
  await target.upsertDocuments(collection, [...docs.slice(6), doc("rare/pens.txt", ["pens and paper, with one yellow highlighter"])]);
  await target.upsertDocument(collection, doc("common/3.txt", ["now about markers only"]));
  await target.removeDocuments(collection, SOURCE, ["common/5.txt"]);
  const staged = await target.stageDocument(collection, { sourceId: SOURCE, path: "big/log.txt", title: "log.txt", size: 1, modifiedAt: new Date(0), version: null });
  await staged.addChunks([{ chunkIndex: 0, text: "a highlighter in a streamed file" }]);
  await staged.commit();
}

/**
 * The exact tier's bm25 scores are left out: FTS5 keeps a removed row in its averages (row count,
 * mean length), and a row removed before the exact thread read it (ExactBatch.inserts) was never
 * counted, so those scores may differ a little from inline writes'; the stemmed tier's may not.
 */
function shownWithoutExactScores(hits: SearchHit[]): Array<[string, number, boolean, number | null]> {
  return hits.map((h) => [h.path, h.chunkIndex, h.exact, h.exact ? null : Math.round(h.score * 1e6)]);
}

test("SQLite: the exact words written on their own thread give the same hits in the same order as when written on the caller's thread, once settled", async () => {
  const collection = crypto.randomUUID();
  const inline = index(newDir());
  const threaded = index(newDir(), { exactWriter: new ThreadedExactWriter() });
  await writeSample(inline, collection);
  await writeSample(threaded, collection);
  await threaded.settleWrites();
  const { main, exact } = seqs(threaded.filePath(collection));
  assert.equal(exact, main);
  assert.ok(main >= 5);
  for (const query of QUERIES) {
    const expected = shownWithoutExactScores(await inline.search(collection, query, 20));
    assert.deepEqual(shownWithoutExactScores(await threaded.search(collection, query, 20)), expected, query);
  }
  assert.ok((await threaded.search(collection, "highlighter", 10)).filter((h) => h.exact).length === 2);
});

test("SQLite: the exact-words thread holds at most EXACT_QUEUE_BATCHES batches: the next write waits for room", async () => {
  const writer = new ThreadedExactWriter();
  closers.push(() => writer.close());
  const dir = newDir();
  const source = index(dir);
  const collection = crypto.randomUUID();
  await source.upsertDocument(collection, doc("a.txt", ["alpha"]));
  const file = exactPathOf(source.filePath(collection));
  const settled: boolean[] = [];
  const sends = Array.from({ length: EXACT_QUEUE_BATCHES + 1 }, (_, i) =>
    writer.apply(file, { seq: 2 + i, deletes: [], inserts: [100 + i] }).then(() => (settled[i] = true)),
  );
  // Replies are messages (macrotasks): until one comes, only the first EXACT_QUEUE_BATCHES are accepted.
  for (let i = 0; i < 5; i++) await Promise.resolve();
  assert.deepEqual(settled.filter(Boolean).length, EXACT_QUEUE_BATCHES);
  await Promise.all(sends);
  assert.equal((await writer.settle([file])).size, 0);
});

/** A collection written through an index, then its exact file set back to what it was `back` batches ago, as a crash between the two commits leaves it. */
async function exactBehind(): Promise<{ dir: string; collection: string; file: string }> {
  const dir = newDir();
  const collection = crypto.randomUUID();
  const writer = new SqliteFtsIndex({ dir });
  await writer.upsertDocuments(collection, [doc("a.txt", ["zebra crossing"]), doc("b.txt", ["zebra stripes"])]);
  await writer.release(collection);
  const file = writer.filePath(collection);
  const saved = fs.readFileSync(exactPathOf(file));
  // The collection file commits two more batches; the exact file's copy of them is lost.
  await writer.removeDocuments(collection, SOURCE, ["a.txt"]);
  await writer.upsertDocument(collection, doc("c.txt", ["zebra crossing again"]));
  await writer.close();
  for (const suffix of ["-wal", "-shm"]) fs.rmSync(exactPathOf(file) + suffix, { force: true });
  fs.writeFileSync(exactPathOf(file), saved);
  return { dir, collection, file };
}

test("SQLite: an exact file behind its collection's file (a crash between the two commits) gives no wrong answer, and is rebuilt when the collection is opened to write", async () => {
  const { dir, collection, file } = await exactBehind();
  assert.deepEqual(seqs(file), { main: 3, exact: 1 });

  // A reader meanwhile: a.txt's chunk is gone (the exact file still has its row, ignored); c.txt is not in the exact file yet, so it is a stemmed hit.
  const reader = index(dir, { readOnly: true });
  const before = await reader.search(collection, "zebra", 10);
  assert.deepEqual(before.map((h) => [h.path, h.exact]), [["b.txt", true], ["c.txt", false]]);
  const versionBefore = reader.dataVersion(collection);

  const lines: string[] = [];
  const writer = index(dir, { log: (line) => lines.push(line) });
  await writer.upgrade(collection);
  assert.equal(lines.length, 1);
  assert.match(lines[0], /in \d+ ms: it was behind \(1 of 3\)$/);
  assert.deepEqual(seqs(file), { main: 3, exact: 3 });
  const after = await reader.search(collection, "zebra", 10);
  assert.deepEqual(after.map((h) => [h.path, h.exact]).sort(), [["b.txt", true], ["c.txt", true]]);
  // The collection's file did not change, its exact file did: a cached result must not be served.
  assert.notEqual(reader.dataVersion(collection), versionBefore);
});

const BROKEN: Array<[string, (exactFile: string) => void, RegExp]> = [
  ["missing", (f) => fs.rmSync(f), /it was missing$/],
  ["damaged", (f) => fs.writeFileSync(f, Buffer.alloc(64 * 1024, 7)), /it was (damaged|unreadable)/],
  ["of another schema", (f) => withFile(f, (db) => db.pragma("user_version = 99")), /it was schema 99$/],
  ["ahead", (f) => withFile(f, (db) => db.prepare("UPDATE exact_state SET seq = 99").run()), /it was ahead \(99 of \d+\)$/],
];

function withFile(file: string, work: (db: Database.Database) => void): void {
  const db = new Database(file);
  try {
    work(db);
  } finally {
    db.close();
  }
}

for (const [what, breakIt, logged] of BROKEN) {
  test(`SQLite: an exact file ${what}: searches answer from the stemmed tier alone (the collection is not damaged), and the writer rebuilds it`, async () => {
    const dir = newDir();
    const collection = crypto.randomUUID();
    const first = new SqliteFtsIndex({ dir });
    await first.upsertDocuments(collection, [doc("a.txt", ["a yellow highlighter"]), doc("b.txt", ["highlights everywhere"])]);
    await first.close();
    const file = first.filePath(collection);
    for (const suffix of ["-wal", "-shm"]) fs.rmSync(exactPathOf(file) + suffix, { force: true });
    breakIt(exactPathOf(file));

    const reader = index(dir, { readOnly: true });
    // "highlighter" by its stem finds both; neither as an exact word while the exact file cannot be used.
    const hits = await reader.search(collection, "highlighter", 10);
    assert.deepEqual(hits.map((h) => [h.path, h.exact]).sort(), [["a.txt", false], ["b.txt", false]]);
    assert.equal((await reader.stats(collection)).indexStatus, "ok");
    assert.equal(await reader.check(collection), "older");

    const lines: string[] = [];
    const writer = index(dir, { log: (line) => lines.push(line) });
    await writer.upgrade(collection);
    assert.match(lines.join("\n"), logged);
    assert.deepEqual((await reader.search(collection, "highlighter", 10)).map((h) => [h.path, h.exact]), [["a.txt", true], ["b.txt", false]]);
    assert.equal(await reader.check(collection), "current");
  });
}

test("SQLite threaded: a collection whose exact file is missing (a restored backup) has it rebuilt by the writer before its first read", async () => {
  const dir = newDir();
  const collection = crypto.randomUUID();
  const first = new SqliteFtsIndex({ dir });
  await first.upsertDocuments(collection, [doc("a.txt", ["a yellow highlighter"]), doc("b.txt", ["highlights everywhere"])]);
  await first.close();
  for (const suffix of ["", "-wal", "-shm"]) fs.rmSync(exactPathOf(first.filePath(collection)) + suffix, { force: true });

  const lines: string[] = [];
  const threaded = new ThreadedSqliteIndex({ dir, log: (line) => lines.push(line) });
  closers.push(() => threaded.close());
  const hits = await threaded.search(collection, "highlighter", 10);
  assert.deepEqual(hits.map((h) => [h.path, h.exact]), [["a.txt", true], ["b.txt", false]]);
  assert.equal(lines.length, 1);
  assert.match(lines[0], /it was missing$/);
});

test("SQLite threaded: a job's writes through the writer thread are in the exact file once settleWrites answers; dropping the collection deletes both files", async () => {
  const dir = newDir();
  const collection = crypto.randomUUID();
  const threaded = new ThreadedSqliteIndex({ dir });
  closers.push(() => threaded.close());
  await writeSample(threaded, collection);
  await threaded.settleWrites();
  const file = path.join(dir, `${collection}.db`);
  const { main, exact } = seqs(file);
  assert.equal(exact, main);
  assert.deepEqual(
    (await threaded.search(collection, "highlighter", 10)).filter((h) => h.exact).map((h) => h.path).sort(),
    ["big/log.txt", "rare/pens.txt"],
  );
  await threaded.drop(collection);
  assert.deepEqual(fs.readdirSync(dir).filter((name) => name.startsWith(collection)), []);
});
