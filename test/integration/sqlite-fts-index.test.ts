import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import crypto from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { DataSource } from "typeorm";
import Database from "better-sqlite3";
import { SQLITE_INDEX_MIGRATIONS, SqliteFtsIndex } from "../../server/search/sqlite";
import { SCHEMA_VERSION } from "../../server/search/sqlite/sqlite-fts-schema";
import { parseQuery } from "../../server/search/query";
import { ThreadedSqliteIndex } from "../../server/search/threaded-index";
import { loadConfig } from "../../server/config";
import { PostgresFtsIndex } from "../../server/search/postgres";
import type { DocumentInput, SearchIndex } from "../../server/search/search-index";
import { openDatabase } from "../../server/data/data-source";
import { postgresBinDir, sharedPostgres } from "../fixtures/postgres";

// Every behaviour below runs on both engines: SQLite FTS5 (desktop) and PostgreSQL full-text (team server).

interface Engine {
  name: string;
  /** Why the engine cannot run here, or null. */
  skip: string | null;
  newIndex(): Promise<{ index: SearchIndex; collection: string; dir: string | null }>;
  /** What a failed unique / not-null write reports. */
  uniqueError: RegExp;
  notNullError: RegExp;
}

const tempDirs: string[] = [];
const closers: (() => Promise<void>)[] = [];
after(async () => {
  for (const close of closers) await close();
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
});

const sqlite: Engine = {
  name: "SQLite FTS5",
  skip: null,
  async newIndex() {
    const dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "sluice-fts-")), "indexes");
    tempDirs.push(path.dirname(dir));
    const index = new SqliteFtsIndex({ dir });
    closers.push(() => index.close());
    return { index, dir, collection: crypto.randomUUID() };
  },
  uniqueError: /UNIQUE/,
  notNullError: /NOT NULL/,
};

let pgIndex: Promise<PostgresFtsIndex> | null = null;
const postgres: Engine = {
  name: "PostgreSQL full-text",
  skip: postgresBinDir() ? null : "PostgreSQL is not installed",
  async newIndex() {
    pgIndex ??= (async () => {
      const cluster = await sharedPostgres();
      const db: DataSource = await openDatabase({ dataDir: os.tmpdir(), databaseUrl: await cluster.createDatabase() });
      closers.push(() => db.destroy());
      return new PostgresFtsIndex(db);
    })();
    // One database for every test: each test has its own collection, as on a real team server.
    return { index: await pgIndex, dir: null, collection: crypto.randomUUID() };
  },
  uniqueError: /unique constraint/,
  notNullError: /not-null constraint/,
};

const SOURCE = "8f0c2a4e-5d1b-4c3a-9e7f-0a1b2c3d4e5f";

function doc(p: string, texts: string[], extra: Partial<DocumentInput> = {}): DocumentInput {
  return {
    sourceId: SOURCE,
    path: p,
    title: path.basename(p),
    size: texts.join("").length,
    modifiedAt: new Date("2024-05-01T10:00:00.000Z"),
    version: null,
    chunks: texts.map((text, chunkIndex) => ({ chunkIndex, text })),
    ...extra,
  };
}

for (const engine of [sqlite, postgres]) {
  describe(engine.name, { skip: engine.skip ?? false }, () => {
  test("upsert then search finds a phrase in the right document with a marked snippet", async () => {
      const { index, collection } = await engine.newIndex();
      await index.upsertDocument(collection, doc("share/notes/a.txt", ["Nothing to see here.", "Minutes: the quarterly budget review went well."]));
      const id = await index.upsertDocument(collection, doc("share/notes/b.txt", ["The budget is quarterly. Review later."]));
      assert.match(id, /^[0-9a-f-]{36}$/);

      const hits = await index.search(collection, '"quarterly budget review"', 10);
      assert.equal(hits.length, 1);
      assert.equal(hits[0].path, "share/notes/a.txt");
      assert.equal(hits[0].title, "a.txt");
      assert.equal(hits[0].chunkIndex, 1);
      assert.ok(hits[0].score > 0);
      assert.equal(hits[0].snippet, "Minutes: the <mark>quarterly budget review</mark> went well.");

      // Unquoted terms are ANDed: both documents contain all three words.
      const both = await index.search(collection, "quarterly budget review", 10);
      assert.deepEqual(both.map((h) => h.path).sort(), ["share/notes/a.txt", "share/notes/b.txt"]);
      assert.ok(both[0].score >= both[1].score);
    });

    test("AND falls back to OR when no chunk has every term", async () => {
      const { index, collection } = await engine.newIndex();
      await index.upsertDocument(collection, doc("a.txt", ["apples and pears"]));
      await index.upsertDocument(collection, doc("b.txt", ["bananas only"]));
      const hits = await index.search(collection, "apples bananas ", 10);
      assert.deepEqual(hits.map((h) => h.path).sort(), ["a.txt", "b.txt"]);
      assert.deepEqual((await index.search(collection, "apples pears ", 10)).map((h) => h.path), ["a.txt"]);
    });

    test("the last term matches as a prefix, stemming and diacritics are folded", async () => {
      const { index, collection } = await engine.newIndex();
      await index.upsertDocument(collection, doc("cafe.txt", ["We met at the café after the runners finished running."]));
      assert.equal((await index.search(collection, "cafe", 5)).length, 1);
      assert.match((await index.search(collection, "cafe", 5))[0].snippet, /<mark>café<\/mark>/);
      assert.equal((await index.search(collection, "CAFÉ", 5)).length, 1);
      assert.equal((await index.search(collection, "run", 5)).length, 1, "porter: run ~ running");
      assert.equal((await index.search(collection, "finis", 5)).length, 1, "prefix on the last term");
      assert.equal((await index.search(collection, "finis ", 5)).length, 0, "a trailing space ends the prefix");
      assert.equal((await index.search(collection, '"finis"', 5)).length, 0, "a quoted term is exact");
    });

    test("re-upsert replaces the old chunks", async () => {
      const { index, collection } = await engine.newIndex();
      const first = await index.upsertDocument(collection, doc("x.txt", ["old walrus text", "more walrus", "third"]));
      const second = await index.upsertDocument(collection, doc("x.txt", ["new narwhal text"], { size: 99 }));
      assert.notEqual(first, second);
      assert.deepEqual(await index.search(collection, "walrus", 10), []);
      const hits = await index.search(collection, "narwhal", 10);
      assert.equal(hits.length, 1);
      assert.equal(hits[0].documentId, second);
      assert.deepEqual(await index.stats(collection), { documentCount: 1, chunkCount: 1, indexStatus: "ok" });
      const list = await index.listDocuments(collection, 0, 10);
      assert.equal(list.items[0].size, 99);
    });

    test("chunksByKey answers chunks' whole text and place in the order asked, null for one not indexed", async () => {
      const { index, collection } = await engine.newIndex();
      const long = `Start of a long chunk. ${"filler words ".repeat(40)}The very end.`;
      const a = await index.upsertDocument(collection, doc("a.txt", ["first chunk", long]));
      const b = await index.upsertDocument(collection, doc("b.txt", ["only chunk of b"]));
      const scan = await index.upsertDocument(collection, {
        ...doc("scan.pdf", []),
        chunks: [{ chunkIndex: 0, text: "a scanned page", page: 4, location: "page 4", scanned: true }],
      });
      const found = await index.chunksByKey(collection, [
        { documentId: b, chunkIndex: 0 },
        { documentId: a, chunkIndex: 1 },
        { documentId: a, chunkIndex: 7 },
        { documentId: crypto.randomUUID(), chunkIndex: 0 },
        { documentId: scan, chunkIndex: 0 },
        { documentId: a, chunkIndex: 0 },
      ]);
      const unpaged = (text: string) => ({ text, page: null, locationLabel: null, scanned: false });
      assert.deepEqual(found, [unpaged("only chunk of b"), unpaged(long), null, null, { text: "a scanned page", page: 4, locationLabel: "page 4", scanned: true }, unpaged("first chunk")]);
      assert.deepEqual(await index.chunksByKey(collection, []), []);
      assert.deepEqual(await index.chunksByKey(crypto.randomUUID(), [{ documentId: a, chunkIndex: 0 }]), [null], "another collection's chunk is not read");
    });

    test("a failure in the middle of an upsert leaves the old version intact", async () => {
      const { index, collection } = await engine.newIndex();
      const original = await index.upsertDocument(collection, doc("x.txt", ["original walrus text"]));
      const broken = doc("x.txt", ["replacement narwhal text", "second chunk"]);
      broken.chunks[1].chunkIndex = 0; // violates UNIQUE(document_id, chunk_index) on the second insert
      await assert.rejects(index.upsertDocument(collection, broken), engine.uniqueError);

      const hits = await index.search(collection, "walrus", 10);
      assert.equal(hits.length, 1);
      assert.equal(hits[0].documentId, original);
      assert.deepEqual(await index.search(collection, "narwhal", 10), []);
      assert.deepEqual(await index.stats(collection), { documentCount: 1, chunkCount: 1, indexStatus: "ok" });

      // This one fails on the last statement, after the old version was deleted: the rollback restores it.
      const late = doc("x.txt", ["replacement narwhal text"], { size: Number.NaN }); // NaN binds as NULL: size is NOT NULL
      await assert.rejects(index.upsertDocument(collection, late), engine.notNullError);
      assert.deepEqual((await index.search(collection, "walrus", 10)).map((h) => h.documentId), [original]);
      assert.deepEqual(await index.search(collection, "narwhal", 10), []);
      assert.deepEqual(await index.stats(collection), { documentCount: 1, chunkCount: 1, indexStatus: "ok" });
    });

    test("removeDocuments removes only the named paths of that source", async () => {
      const { index, collection } = await engine.newIndex();
      await index.upsertDocument(collection, doc("a.txt", ["zebra one"]));
      await index.upsertDocument(collection, doc("b.txt", ["zebra two"]));
      await index.upsertDocument(collection, doc("c.txt", ["zebra three"]));
      await index.removeDocuments(collection, SOURCE, ["a.txt", "c.txt", "missing.txt"]);
      await index.removeDocuments(collection, crypto.randomUUID(), ["b.txt"]);
      assert.deepEqual((await index.search(collection, "zebra", 10)).map((h) => h.path), ["b.txt"]);
      assert.deepEqual(await index.stats(collection), { documentCount: 1, chunkCount: 1, indexStatus: "ok" });
      await index.removeDocuments(crypto.randomUUID(), SOURCE, ["a.txt"]); // no index file: a no-op
    });

    test("indexedState reports size, mtime and version per path of one source", async () => {
      const { index, collection } = await engine.newIndex();
      const mtime = new Date("2023-01-02T03:04:05.678Z");
      await index.upsertDocument(collection, doc("a.txt", ["x"], { size: 10, modifiedAt: mtime }));
      await index.upsertDocument(collection, doc("b.txt", ["y"], { size: 20, modifiedAt: mtime, version: "rev-7" }));
      await index.upsertDocument(collection, doc("c.txt", ["z"], { sourceId: crypto.randomUUID() }));
      const state = await index.indexedState(collection, SOURCE);
      assert.deepEqual(
        [...state.entries()].sort(([a], [b]) => a.localeCompare(b)),
        [
          ["a.txt", { size: 10, modifiedAt: mtime, version: null, changedAt: null, aclId: null }],
          ["b.txt", { size: 20, modifiedAt: mtime, version: "rev-7", changedAt: null, aclId: null }],
        ],
      );
      assert.equal((await index.indexedState(crypto.randomUUID(), SOURCE)).size, 0);
    });

    test("listDocuments pages in path order", async () => {
      const { index, collection } = await engine.newIndex();
      for (const name of ["d", "b", "e", "a", "c"]) await index.upsertDocument(collection, doc(`dir/${name}.txt`, ["one", "two"]));
      const page1 = await index.listDocuments(collection, 0, 2);
      const page2 = await index.listDocuments(collection, 2, 2);
      const page3 = await index.listDocuments(collection, 4, 2);
      assert.equal(page1.total, 5);
      assert.deepEqual(
        [...page1.items, ...page2.items, ...page3.items].map((d) => d.path),
        ["dir/a.txt", "dir/b.txt", "dir/c.txt", "dir/d.txt", "dir/e.txt"],
      );
      assert.equal(page3.items.length, 1);
      const first = page1.items[0];
      assert.equal(first.sourceId, SOURCE);
      assert.equal(first.title, "a.txt");
      assert.equal(first.chunkCount, 2);
      assert.ok(first.indexedAt instanceof Date && Math.abs(first.indexedAt.getTime() - Date.now()) < 60_000);
      assert.deepEqual(await index.listDocuments(crypto.randomUUID(), 0, 10), { total: 0, items: [] });
    });

    test("stats and search on a collection without an index file answer empty and create nothing", async () => {
      const { index, dir, collection } = await engine.newIndex();
      assert.deepEqual(await index.stats(collection), { documentCount: 0, chunkCount: 0, indexStatus: "ok" });
      assert.deepEqual(await index.search(collection, "anything", 10), []);
      if (dir) assert.equal(fs.existsSync(dir), false);
      await index.upsertDocument(collection, doc("a.txt", ["alpha", "beta", "gamma"]));
      await index.upsertDocument(collection, doc("b.txt", ["delta"]));
      assert.deepEqual(await index.stats(collection), { documentCount: 2, chunkCount: 4, indexStatus: "ok" });
    });

    test("drop closes and deletes the files; a missing file is fine", async () => {
      const { index, dir, collection } = await engine.newIndex();
      await index.upsertDocument(collection, doc("a.txt", ["alpha"]));
      if (dir) assert.ok(fs.readdirSync(dir).some((f) => f === `${collection}.db`));
      await index.drop(collection);
      if (dir) {
        assert.deepEqual(
          fs.readdirSync(dir).filter((f) => f.startsWith(collection)),
          [],
        );
      }
      assert.deepEqual(await index.stats(collection), { documentCount: 0, chunkCount: 0, indexStatus: "ok" });
      await index.drop(collection);
      await index.drop(crypto.randomUUID());
      // The collection can be written again after a drop.
      await index.upsertDocument(collection, doc("a.txt", ["again"]));
      assert.equal((await index.search(collection, "again", 10)).length, 1);
    });

    test("files without text are remembered (markEmpty): indexedState answers them as empty, nothing else sees them; a document, a removal and a drop end a mark", async () => {
      const { index, collection } = await engine.newIndex();
      const OTHER = "1d2c3b4a-0000-4000-8000-000000000001";
      const at = new Date("2024-06-02T08:00:00.000Z");
      await index.upsertDocuments(collection, [doc("notes.txt", ["a walrus in the notes"]), doc("was-text.txt", ["a walrus once"])]);
      await index.markEmpty(collection, SOURCE, [
        { path: "photo.png", size: 1234, modifiedAt: at, version: null },
        { path: "blank.txt", size: 0, modifiedAt: at, version: "rev-1" },
        // A file that had text and has none now: its document goes with the mark.
        { path: "was-text.txt", size: 9, modifiedAt: at, version: null },
      ]);
      await index.markEmpty(collection, OTHER, [{ path: "photo.png", size: 1, modifiedAt: at, version: null }]);

      const state = await index.indexedState(collection, SOURCE);
      assert.deepEqual([...state.keys()].sort(), ["blank.txt", "notes.txt", "photo.png", "was-text.txt"]);
      assert.deepEqual(state.get("photo.png"), { size: 1234, modifiedAt: at, version: null, changedAt: null, aclId: null, empty: true });
      assert.deepEqual(state.get("blank.txt"), { size: 0, modifiedAt: at, version: "rev-1", changedAt: null, aclId: null, empty: true });
      assert.equal(state.get("was-text.txt")?.empty, true);
      assert.equal(state.get("notes.txt")?.empty, undefined);
      assert.deepEqual([...(await index.indexedState(collection, OTHER)).keys()], ["photo.png"], "marks are per source");
      // Counts, listings and searches see documents only.
      assert.deepEqual(await index.stats(collection), { documentCount: 1, chunkCount: 1, indexStatus: "ok" });
      assert.deepEqual((await index.listDocuments(collection, 0, 10)).items.map((d) => d.path), ["notes.txt"]);
      assert.deepEqual((await index.search(collection, "walrus", 10)).map((h) => h.path), ["notes.txt"]);

      // Marked again (the file changed, still without text): the newer identity wins.
      const later = new Date("2024-06-03T08:00:00.000Z");
      await index.markEmpty(collection, SOURCE, [{ path: "photo.png", size: 99, modifiedAt: later, version: null }]);
      assert.deepEqual((await index.indexedState(collection, SOURCE)).get("photo.png"), { size: 99, modifiedAt: later, version: null, changedAt: null, aclId: null, empty: true });

      // The file got text: a document, no mark (one entry, not empty). Staged documents too.
      await index.upsertDocument(collection, doc("photo.png", ["the walrus on the whiteboard"]));
      const staged = await index.stageDocument(collection, { sourceId: SOURCE, path: "blank.txt", title: "blank.txt", size: 5, modifiedAt: later, version: "rev-2" });
      await staged.addChunks([{ chunkIndex: 0, text: "now a walrus" }]);
      await staged.commit();
      const after = await index.indexedState(collection, SOURCE);
      assert.equal(after.get("photo.png")?.empty, undefined);
      assert.equal(after.get("photo.png")?.size, doc("photo.png", ["the walrus on the whiteboard"]).size);
      assert.deepEqual([after.get("blank.txt")?.empty, after.get("blank.txt")?.version], [undefined, "rev-2"]);
      assert.equal((await index.stats(collection)).documentCount, 3);

      // Removing a path removes its mark (a deleted file, or a deleted source's every path).
      await index.markEmpty(collection, SOURCE, [{ path: "gone.png", size: 1, modifiedAt: at, version: null }]);
      await index.removeDocuments(collection, SOURCE, ["gone.png", "was-text.txt"]);
      assert.deepEqual([...(await index.indexedState(collection, SOURCE)).keys()].sort(), ["blank.txt", "notes.txt", "photo.png"]);
      assert.equal((await index.stats(collection)).documentCount, 3);

      // Dropping the collection drops its marks.
      await index.drop(collection);
      assert.equal((await index.indexedState(collection, OTHER)).size, 0);
    });

    // Only the SQLite engine names a file by the collection id; PostgreSQL's takes ids as the routes validated them.
    test("collection ids must be UUIDs before they become file names", { skip: engine !== sqlite && "no file names here" }, async () => {
      const { index } = await engine.newIndex();
      for (const bad of ["../etc/passwd", "x", "", "00000000-0000-0000-0000-00000000000g"]) {
        await assert.rejects(index.search(bad, "a", 1), /not found/i);
        await assert.rejects(index.upsertDocument(bad, doc("a.txt", ["a"])), /not found/i);
      }
    });

    test("two sources with the same path do not collide", async () => {
      const { index, collection } = await engine.newIndex();
      const other = crypto.randomUUID();
      const a = await index.upsertDocument(collection, doc("same/path.txt", ["from the first source: ocelot"]));
      const b = await index.upsertDocument(collection, doc("same/path.txt", ["from the second source: ocelot"], { sourceId: other }));
      assert.deepEqual(await index.stats(collection), { documentCount: 2, chunkCount: 2, indexStatus: "ok" });
      assert.deepEqual((await index.search(collection, "ocelot", 10)).map((h) => h.documentId).sort(), [a, b].sort());
      await index.removeDocuments(collection, other, ["same/path.txt"]);
      assert.deepEqual((await index.search(collection, "ocelot", 10)).map((h) => h.documentId), [a]);
    });

    test("weird queries never throw", async () => {
      const { index, collection } = await engine.newIndex();
      await index.upsertDocument(collection, doc("w.txt", ["AND OR NOT near col x e-mail 日本語のテキスト 🙂 party (parens) star*"]));
      const queries = [
        '"', '""', '"""', "AND OR NOT", "AND", "NOT x", "*", "-", "-x", "col:x", "title:x", "(", ")", "()", "^x", "x^", "{a b}",
        "NEAR(a b)", "a + b", "'", "\\", "\u0000", "ümlaut çà", "日本語", "🙂", "🎉🎉", "\uE000", "x \u0301", " ", "", "\t\n",
        '"unterminated phrase', 'a "b c', "a:b:c", "%_", "x".repeat(5000), Array.from({ length: 200 }, (_, i) => `t${i}`).join(" "),
      ];
      for (const q of queries) {
        const hits = await index.search(collection, q, 10);
        assert.ok(Array.isArray(hits), q);
      }
      assert.equal((await index.search(collection, "AND OR NOT", 10)).length, 1, "operators are plain words");
      assert.equal((await index.search(collection, "col:x", 10)).length, 1, "no column filters");
      assert.equal((await index.search(collection, "e-mail", 10)).length, 1);
      assert.equal((await index.search(collection, "🙂", 10)).length, 1);
      assert.equal((await index.search(collection, "日本語のテキスト", 10)).length, 1);
      assert.deepEqual(await index.search(collection, "   ", 10), []);
      assert.deepEqual(await index.search(collection, "", 10), []);
    });

    test("topK is clamped to 1..100", async () => {
      const { index, collection } = await engine.newIndex();
      await index.upsertDocument(collection, doc("many.txt", Array.from({ length: 120 }, (_, i) => `lemur number ${i}`)));
      assert.equal((await index.search(collection, "lemur", 0)).length, 1);
      assert.equal((await index.search(collection, "lemur", -5)).length, 1);
      assert.equal((await index.search(collection, "lemur", 1000)).length, 100);
      assert.equal((await index.search(collection, "lemur", Number.NaN)).length, 1);
    });

    test("snippets escape content so it cannot inject tags", async () => {
      const { index, collection } = await engine.newIndex();
      await index.upsertDocument(
        collection,
        doc("x.html", ['Before <script>alert("xss")</script> & <b>bold</b> \uE000fake\uE001 <mark>not ours</mark> after']),
      );
      const [hit] = await index.search(collection, "script", 10);
      assert.ok(hit);
      assert.equal(hit.snippet.includes("<script"), false);
      assert.equal(hit.snippet.includes("<b>"), false);
      assert.match(hit.snippet, /&lt;<mark>script<\/mark>&gt;alert\(&quot;xss&quot;\)&lt;\/<mark>script<\/mark>&gt;/);
      assert.match(hit.snippet, /&amp; &lt;b&gt;bold&lt;\/b&gt;/);
      assert.match(hit.snippet, /fake &lt;mark&gt;not ours&lt;\/mark&gt;/);
      // Every tag left in the snippet is one of ours, around a matched term.
      assert.deepEqual(hit.snippet.match(/<[^>]*>/g), ["<mark>", "</mark>", "<mark>", "</mark>"]);
    });

    test("each hit's snippet comes from its own chunk, with several matching chunks per document", async () => {
      const { index, collection } = await engine.newIndex();
      // Three documents, seven matching chunks (and one that does not match), each naming itself.
      const chunks: Record<string, string[]> = {
        "a.txt": ["heron alpha0", "heron alpha1", "nothing here", "heron alpha3"],
        "b.txt": ["heron bravo0", "heron bravo1"],
        "c.txt": ["heron charlie0", "heron charlie1"],
      };
      for (const [name, texts] of Object.entries(chunks)) await index.upsertDocument(collection, doc(name, texts));
      const hits = await index.search(collection, "heron", 10);
      assert.equal(hits.length, 7);
      for (const hit of hits) {
        assert.equal(hit.snippet, `<mark>heron</mark> ${chunks[hit.path][hit.chunkIndex].split(" ")[1]}`, `${hit.path}#${hit.chunkIndex}`);
      }
      // The same through every fallback: a prefix of the last word, then any of the words.
      for (const [query, count] of [["hero", 7], ["bravo1 charlie0", 2]] as const) {
        const found = await index.search(collection, query, 10);
        assert.equal(found.length, count, query);
        for (const hit of found) assert.ok(hit.snippet.includes(chunks[hit.path][hit.chunkIndex].split(" ")[1]), `${query}: ${hit.path}#${hit.chunkIndex} ${hit.snippet}`);
      }
      // A prefix's snippets are read in one pass over the hits' rowids: each still its own chunk's, marked.
      for (const hit of await index.search(collection, "hero", 10)) {
        assert.equal(hit.snippet, `<mark>heron</mark> ${chunks[hit.path][hit.chunkIndex].split(" ")[1]}`, `hero: ${hit.path}#${hit.chunkIndex}`);
      }
    });

    test("a document written in parts replaces the old version only at commit", async () => {
      const { index, collection } = await engine.newIndex();
      const { chunks: _, ...header } = doc("big.log", []);
      const old = await index.upsertDocument(collection, doc("big.log", ["old walrus line"]));
      const staged = await index.stageDocument(collection, { ...header, size: 12345 });
      await staged.addChunks([
        { chunkIndex: 0, text: "first narwhal batch" },
        { chunkIndex: 1, text: "still the first batch" },
      ]);
      await staged.addChunks([{ chunkIndex: 2, text: "second batch with a pelican" }]);
      assert.deepEqual((await index.search(collection, "walrus", 10)).map((h) => h.documentId), [old], "the old version answers until commit");
      assert.deepEqual(await index.search(collection, "narwhal", 10), [], "staged chunks are not searchable yet");
      assert.deepEqual(await index.stats(collection), { documentCount: 1, chunkCount: 1, indexStatus: "ok" });
      const id = await staged.commit();
      assert.notEqual(id, old);
      assert.deepEqual(await index.search(collection, "walrus", 10), []);
      assert.deepEqual((await index.search(collection, "narwhal", 10)).map((h) => [h.documentId, h.chunkIndex]), [[id, 0]]);
      assert.deepEqual((await index.search(collection, "pelican", 10)).map((h) => [h.documentId, h.chunkIndex]), [[id, 2]]);
      assert.deepEqual(await index.stats(collection), { documentCount: 1, chunkCount: 3, indexStatus: "ok" });
      const [listed] = (await index.listDocuments(collection, 0, 10)).items;
      assert.equal(listed.size, 12345);
      assert.equal(listed.chunkCount, 3);
      await assert.rejects(staged.addChunks([{ chunkIndex: 3, text: "late" }]), /already committed or discarded/);
    });

    test("a discarded document in parts leaves the old version and nothing of its own", async () => {
      const { index, collection } = await engine.newIndex();
      const { chunks: _, ...header } = doc("big.log", []);
      const old = await index.upsertDocument(collection, doc("big.log", ["old walrus line"]));
      const staged = await index.stageDocument(collection, header);
      await staged.addChunks([{ chunkIndex: 0, text: "doomed narwhal batch" }]);
      await staged.discard();
      await staged.discard(); // twice is fine
      assert.deepEqual((await index.search(collection, "walrus", 10)).map((h) => h.documentId), [old]);
      assert.deepEqual(await index.search(collection, "narwhal", 10), []);
      assert.deepEqual(await index.stats(collection), { documentCount: 1, chunkCount: 1, indexStatus: "ok" });
      // A new file in parts, with no old version, shows up at its commit.
      const fresh = await index.stageDocument(collection, { ...header, path: "fresh.log" });
      await fresh.addChunks([{ chunkIndex: 0, text: "fresh heron" }]);
      assert.equal((await index.listDocuments(collection, 0, 10)).total, 1);
      await fresh.commit();
      assert.equal((await index.search(collection, "heron", 10))[0]?.path, "fresh.log");
      assert.equal((await index.listDocuments(collection, 0, 10)).total, 2);
    });

    test("a title hit ranks above a single body hit", async () => {
      const { index, collection } = await engine.newIndex();
      const filler = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor";
      await index.upsertDocument(collection, doc("body.txt", [`${filler} pangolin ${filler}`], { title: "Notes" }));
      await index.upsertDocument(collection, doc("title.txt", [`${filler} ${filler}`], { title: "Pangolin report" }));
      const hits = await index.search(collection, "pangolin", 10);
      assert.deepEqual(hits.map((h) => h.path), ["title.txt", "body.txt"]);
      assert.ok(hits[0].score > hits[1].score);
    });

    test("a rare word typed exactly finds its file although its stem is common (exact words first)", async () => {
      const { index, collection } = await engine.newIndex();
      // 30 short files that say "highlight" in every form, in their titles too: on stems alone
      // they outrank the one long file that has the rare word "highlighter" once.
      const filler = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt";
      const common = Array.from({ length: 30 }, (_, i) => doc(`common/${i}.txt`, ["highlights highlighted highlighting highlight"], { title: `Highlight ${i}` }));
      await index.upsertDocuments(collection, common);
      await index.upsertDocument(collection, doc("rare/pens.txt", [`${filler} ${filler} the yellow highlighter ${filler} ${filler}`], { title: "Pens" }));
      const hits = await index.search(collection, "highlighter", 10);
      assert.equal(hits[0]?.path, "rare/pens.txt", hits.map((h) => h.path).join(", "));
      assert.equal(hits[0].exact, true);
      assert.match(hits[0].snippet, /<mark>highlighter<\/mark>/);
      // The stem still finds the rest, after it, marked as not exact.
      assert.equal(hits.length, 10);
      assert.ok(hits.slice(1).every((h) => !h.exact && h.path.startsWith("common/")));
      // A query for the common form ranks its own exact form first: the rare file comes last.
      const stemHits = await index.search(collection, "highlight", 100);
      assert.equal(stemHits.length, 31);
      assert.equal(stemHits.at(-1)!.path, "rare/pens.txt");
      assert.equal(stemHits.at(-1)!.exact, false);
    });

    test("the probe test on a synthetic corpus: each file is found by its own rare words", async () => {
      const { index, collection } = await engine.newIndex();
      // Each file has one rare exact form (stem + "ers", "ings", ...) whose stem every other file has.
      const stems = ["print", "scan", "label", "stapl", "fold"];
      const suffixes = ["er", "ers", "ing", "ings", "ed", "able"];
      const docs = stems.flatMap((stem, s) =>
        suffixes.map((suffix, k) =>
          doc(`probe/${stem}-${k}.txt`, [`${stems.map((t) => `${t}e ${t}s`).join(" ")} note ${s * 10 + k} about the ${stem}${suffix} today`], {
            title: `${stem} ${k}`,
          }),
        ),
      );
      await index.upsertDocuments(collection, docs);
      let found = 0;
      for (const [i, stem] of stems.entries()) {
        for (const [k, suffix] of suffixes.entries()) {
          const hits = await index.search(collection, `${stem}${suffix}`, 1);
          if (hits[0]?.path === `probe/${stem}-${k}.txt`) found++;
          else assert.fail(`${stem}${suffix} (${i}/${k}): ${hits.map((h) => h.path).join(", ")}`);
        }
      }
      assert.equal(found, stems.length * suffixes.length);
    });

    test("perDocument caps the chunks of one document, so a long document cannot fill the page", async () => {
      const { index, collection } = await engine.newIndex();
      await index.upsertDocument(collection, doc("long.txt", Array.from({ length: 12 }, (_, i) => `gannet gannet colony part ${i}`)));
      await index.upsertDocument(collection, doc("short.txt", ["one gannet among many other words in a longer sentence"]));
      assert.deepEqual([...new Set((await index.search(collection, "gannet", 5)).map((h) => h.path))], ["long.txt"]);
      const capped = await index.search(collection, "gannet", 5, { perDocument: 2 });
      assert.deepEqual(capped.map((h) => h.path), ["long.txt", "long.txt", "short.txt"]);
    });

    test("firstPerDocument: a long document's chunks past the first few follow the short documents' (none dropped, exact words still first)", async () => {
      const { index, collection } = await engine.newIndex();
      // The long document says the word twice in each of its 12 chunks: on its score alone it fills a page of 10.
      await index.upsertDocument(collection, doc("long.txt", Array.from({ length: 12 }, (_, i) => `gannet gannet colony part ${i}`)));
      const shorts = ["a", "b", "c"].map((name) => doc(`short-${name}.txt`, [`one gannet among many other words in a longer sentence about ${name}`]));
      await index.upsertDocuments(collection, shorts);
      // Only the stem matches here ("gannets"): after every chunk with the word as typed, the long document's included.
      await index.upsertDocument(collection, doc("plural.txt", ["gannets"]));
      const plain = await index.search(collection, "gannet", 10);
      assert.ok(plain.every((h) => h.path === "long.txt"), plain.map((h) => h.path).join(", "));

      const spread = await index.search(collection, "gannet", 10, { firstPerDocument: 2 });
      const paths = spread.map((h) => h.path);
      assert.deepEqual(paths.slice(0, 2), ["long.txt", "long.txt"], paths.join(", "));
      assert.deepEqual(paths.slice(2, 5).sort(), ["short-a.txt", "short-b.txt", "short-c.txt"]);
      assert.deepEqual(paths.slice(5), Array(5).fill("long.txt"));
      // Best first on each side: the long document's chunks keep their order, its best two first.
      assert.deepEqual(
        spread.filter((h) => h.path === "long.txt").map((h) => h.chunkIndex),
        plain.slice(0, 7).map((h) => h.chunkIndex),
      );

      // Nothing dropped: every matching chunk is still there, the stem-only one last.
      const all = await index.search(collection, "gannet", 100, { firstPerDocument: 2 });
      assert.equal(all.length, 16);
      assert.deepEqual(new Set(all.map((h) => `${h.path}#${h.chunkIndex}`)).size, 16);
      assert.equal(all.at(-1)!.path, "plural.txt");
      assert.equal(all.at(-1)!.exact, false);
      assert.ok(all.slice(0, -1).every((h) => h.exact));
      // A page with no document past the limit is the plain page.
      assert.deepEqual((await index.search(collection, "gannet", 10, { firstPerDocument: 10 })).map((h) => `${h.path}#${h.chunkIndex}`), plain.map((h) => `${h.path}#${h.chunkIndex}`));
      // A hard cap wins over it.
      const capped = await index.search(collection, "gannet", 10, { perDocument: 1, firstPerDocument: 2 });
      assert.deepEqual(capped.map((h) => h.path).sort(), ["long.txt", "plural.txt", "short-a.txt", "short-b.txt", "short-c.txt"]);
    });

    test("firstPerDocument when one document holds more than eight pages of the best chunks (all the walk looks at first): the same spread", async () => {
      const { index, collection } = await engine.newIndex();
      await index.upsertDocument(collection, doc("long.txt", Array.from({ length: 100 }, (_, i) => `gannet gannet colony part ${i}`)));
      await index.upsertDocuments(collection, ["a", "b", "c"].map((name) => doc(`short-${name}.txt`, [`one gannet among many other words in a longer sentence about ${name}`])));
      const paths = (await index.search(collection, "gannet", 10, { firstPerDocument: 2 })).map((h) => h.path);
      assert.deepEqual(paths.slice(0, 2), ["long.txt", "long.txt"], paths.join(", "));
      assert.deepEqual(paths.slice(2, 5).sort(), ["short-a.txt", "short-b.txt", "short-c.txt"]);
      assert.deepEqual(paths.slice(5), Array(5).fill("long.txt"));
      // Many documents, each twice among the best: the page comes from the best rows alone.
      await index.upsertDocuments(collection, Array.from({ length: 20 }, (_, i) => doc(`pair-${i}.txt`, ["gannet gannet gannet gannet", "gannet gannet gannet gannet"])));
      const many = await index.search(collection, "gannet", 10, { firstPerDocument: 1 });
      assert.equal(new Set(many.map((h) => h.path)).size, 10, many.map((h) => h.path).join(", "));
    });

    test("results say when no chunk had every word and the search fell back to any of them", async () => {
      const { index, collection } = await engine.newIndex();
      await index.upsertDocument(collection, doc("a.txt", ["apples and pears"]));
      await index.upsertDocument(collection, doc("b.txt", ["bananas only"]));
      const any = await index.search(collection, "apples bananas ", 10);
      assert.equal(any.length, 2);
      assert.ok(any.every((h) => h.matched === "any"));
      const all = await index.search(collection, "apples pears ", 10);
      assert.deepEqual(all.map((h) => h.matched), ["all"]);
    });

    test("filters by file type and folder apply before ranking", async () => {
      const { index, collection } = await engine.newIndex();
      // Many better matches outside the filter must not crowd out the one inside it.
      const crowd = Array.from({ length: 20 }, (_, i) => doc(`share/other/${i}.txt`, ["walrus walrus walrus"], { title: `Walrus ${i}` }));
      await index.upsertDocuments(collection, crowd);
      await index.upsertDocument(collection, doc("share/reports/q1.PDF", ["a single walrus in a long report about other things entirely"]));
      await index.upsertDocument(collection, doc("share/reports/q1.docx", ["a walrus draft"]));
      await index.upsertDocument(collection, doc("share/reports-old/q0.pdf", ["an old walrus"]));
      assert.deepEqual((await index.search(collection, "walrus", 5, { types: ["pdf"] })).map((h) => h.path).sort(), ["share/reports-old/q0.pdf", "share/reports/q1.PDF"]);
      assert.deepEqual((await index.search(collection, "walrus", 5, { folder: "share/reports" })).map((h) => h.path).sort(), ["share/reports/q1.PDF", "share/reports/q1.docx"]);
      assert.deepEqual((await index.search(collection, "walrus", 5, { folder: "share/reports", types: ["docx", "xlsx"] })).map((h) => h.path), ["share/reports/q1.docx"]);
      assert.deepEqual(await index.search(collection, "walrus", 5, { folder: "share/none" }), []);
    });
  });
}

test("SQLite: removeUnfinished drops the chunks of a document in parts whose process died before commit", async () => {
  const { dir, collection } = await sqlite.newIndex();
  const crashed = new SqliteFtsIndex({ dir: dir! });
  await crashed.upsertDocument(collection, doc("kept.txt", ["kept walrus"]));
  const { chunks: _, ...header } = doc("big.log", []);
  const staged = await crashed.stageDocument(collection, header);
  await staged.addChunks([{ chunkIndex: 0, text: "orphan narwhal" }, { chunkIndex: 1, text: "orphan pelican" }]);
  await crashed.close(); // neither committed nor discarded: the process "died"

  const index = new SqliteFtsIndex({ dir: dir! });
  closers.push(() => index.close());
  const rows = () => {
    const db = new Database(index.filePath(collection), { readonly: true });
    try {
      return [db.prepare("SELECT count(*) FROM chunks").pluck().get(), db.prepare("SELECT count(*) FROM chunks_fts").pluck().get()];
    } finally {
      db.close();
    }
  };
  assert.deepEqual(rows(), [3, 3]);
  await index.removeUnfinished(collection);
  assert.deepEqual(rows(), [1, 1]);
  assert.equal((await index.search(collection, "walrus", 10)).length, 1);
});

/** An index file as an older build (schema version 1, or `version`) wrote it: 12 files saying "highlight", one saying "highlighter". */
function writeVersion1File(file: string, version = 1): void {
  // The file as that build wrote it: its schema, its rows, its user_version.
  const old = new Database(file);
  for (let step = 1; step <= version; step++) old.exec(SQLITE_INDEX_MIGRATIONS[step]);
  const insertDoc = old.prepare("INSERT INTO documents VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
  const insertChunk = old.prepare("INSERT INTO chunks (document_id, chunk_index) VALUES (?, ?)");
  const insertFts = old.prepare("INSERT INTO chunks_fts (rowid, title, path, body) VALUES (?, ?, ?, ?)");
  const write = (id: string, p: string, title: string, text: string) => {
    insertDoc.run(id, SOURCE, p, title, text.length, 0, null, 1, 0);
    insertFts.run(insertChunk.run(id, 0).lastInsertRowid, title, p, text);
  };
  for (let i = 0; i < 12; i++) write(crypto.randomUUID(), `common/${i}.txt`, `Highlight ${i}`, "highlights highlighted highlight");
  write(crypto.randomUUID(), "rare/pens.txt", "Pens", "a long text about pens and paper, with one yellow highlighter somewhere in the middle of it all");
  // Version 2's statements filled chunks_exact from chunks_fts as they ran: before these rows, so fill it as the writes of that build did.
  if (version >= 2) old.exec("INSERT INTO chunks_exact (rowid, title, path, body) SELECT rowid, title, path, body FROM chunks_fts");
  old.pragma(`user_version = ${version}`);
  old.close();
}

/** An index file as schema `version` wrote it (see writeVersion1File), and an index over its folder. */
async function oldIndexFile(version: number): Promise<{ file: string; collection: string; index: SqliteFtsIndex }> {
  const { dir, collection } = await sqlite.newIndex();
  fs.mkdirSync(dir!, { recursive: true });
  const file = path.join(dir!, `${collection}.db`);
  writeVersion1File(file, version);
  const index = new SqliteFtsIndex({ dir: dir! });
  closers.push(() => index.close());
  return { file, collection, index };
}

/** After an upgrade: the rare exact word still finds its file first, and the file is at the current version. */
async function assertUpgradedAndExactFirst(file: string, index: SqliteFtsIndex, collection: string): Promise<void> {
  const hits = await index.search(collection, "highlighter", 10);
  assert.equal(hits[0]?.path, "rare/pens.txt");
  assert.equal(hits[0].exact, true);
  const upgraded = new Database(file, { readonly: true });
  try {
    assert.equal(upgraded.pragma("user_version", { simple: true }), SCHEMA_VERSION);
  } finally {
    upgraded.close();
  }
}

test("SQLite: an index file of schema version 1 (before exact words) is upgraded when opened and answers exact-first", async () => {
  const { file, collection, index } = await oldIndexFile(1);
  await assertUpgradedAndExactFirst(file, index, collection);
  assert.equal((await index.stats(collection)).documentCount, 13);
  // Writes after the upgrade keep both tables in step: replacing and removing the rare file.
  await index.upsertDocument(collection, { ...doc("rare/pens.txt", ["now about markers only"]), title: "Pens" });
  assert.deepEqual(await index.search(collection, '"highlighter"', 10).then((h) => h.filter((x) => x.exact).map((x) => x.path)), []);
  await index.removeDocuments(collection, SOURCE, ["common/0.txt"]);
  assert.equal((await index.search(collection, "highlight", 100)).length, 11);
});

test("SQLite: an index file of schema version 2 (exact words without positions) is upgraded when opened and ranks its exact words by their own bm25", async () => {
  const { file, collection, index } = await oldIndexFile(2);
  const before = new Database(file, { readonly: true });
  assert.match(before.prepare("SELECT sql FROM sqlite_master WHERE name = 'chunks_exact'").pluck().get() as string, /detail = none/);
  before.close();

  await assertUpgradedAndExactFirst(file, index, collection);
  // Every common file has "highlight" as typed: ranked by bm25 (positive scores), titles first.
  const common = await index.search(collection, "highlight", 100);
  assert.equal(common.filter((h) => h.exact).length, 12);
  assert.ok(common.filter((h) => h.exact).every((h) => h.score > 0 && h.path.startsWith("common/")));
  const upgraded = new Database(file, { readonly: true });
  try {
    assert.doesNotMatch(upgraded.prepare("SELECT sql FROM sqlite_master WHERE name = 'chunks_exact'").pluck().get() as string, /detail/);
    assert.equal(upgraded.prepare("SELECT count(*) FROM chunks_exact WHERE chunks_exact MATCH 'highlighter'").pluck().get(), 1);
  } finally {
    upgraded.close();
  }
});

/** The FTS5 'hashsize' each full-text table of a file keeps in its config table (null: SQLite's default). */
function hashSizes(file: string): Array<number | null> {
  const db = new Database(file, { readonly: true });
  try {
    return ["chunks_fts", "chunks_exact"].map((table) => (db.prepare(`SELECT v FROM ${table}_config WHERE k = 'hashsize'`).pluck().get() as number | undefined) ?? null);
  } finally {
    db.close();
  }
}

test("SQLite: an index file of schema version 3 is upgraded when opened: both tables get the larger term buffer, rows and ranking stay", async () => {
  const { file, collection, index } = await oldIndexFile(3);
  assert.deepEqual(hashSizes(file), [null, null]);

  await assertUpgradedAndExactFirst(file, index, collection);
  const common = await index.search(collection, "highlight", 100);
  assert.equal(common.filter((h) => h.exact).length, 12);
  assert.equal((await index.stats(collection)).documentCount, 13);
  assert.deepEqual(hashSizes(file), [8 * 1024 * 1024, 8 * 1024 * 1024]);
  // Writes after the upgrade land in both tables as before.
  await index.upsertDocument(collection, { ...doc("rare/markers.txt", ["a box of highlighter markers"]), title: "Markers" });
  assert.deepEqual((await index.search(collection, "highlighter", 10)).filter((h) => h.exact).map((h) => h.path).sort(), ["rare/markers.txt", "rare/pens.txt"]);
  // An older file keeps the page size it was made with (4 KB): only new files get 16 KB pages.
  assert.equal(pageSize(file), 4096);
  assert.equal((await index.search(collection, "markers", 10))[0]?.path, "rare/markers.txt");
});

test("SQLite: a new index file is created with the larger term buffer on both tables", async () => {
  const { dir, collection } = await sqlite.newIndex();
  const index = new SqliteFtsIndex({ dir: dir! });
  closers.push(() => index.close());
  await index.upsertDocument(collection, doc("a.txt", ["some words"]));
  assert.deepEqual(hashSizes(index.filePath(collection)), [8 * 1024 * 1024, 8 * 1024 * 1024]);
});

/** The page size a file was made with. */
function pageSize(file: string): number {
  const db = new Database(file, { readonly: true });
  try {
    return db.pragma("page_size", { simple: true }) as number;
  } finally {
    db.close();
  }
}

test("SQLite: a 16 KB-page file's WAL is checkpointed at about 4 MB, as a 4 KB-page file's is", async () => {
  const { dir, collection } = await sqlite.newIndex();
  const index = new SqliteFtsIndex({ dir: dir! });
  closers.push(() => index.close());
  const words = Array.from({ length: 2_000 }, (_, i) => `w${(i * 7919) % 100_003}`);
  const text = (seed: number) => Array.from({ length: 1_500 }, (_, i) => words[(seed * 31 + i * 17) % words.length]).join(" ");
  let written = 0;
  // Many small transactions, ~12 MB of WAL frames in all: with SQLite's default of 1,000 pages
  // (16 MB of 16 KB pages) the WAL would never have been checkpointed and would hold them all.
  for (let batch = 0; batch < 40; batch++) {
    await index.upsertDocuments(collection, Array.from({ length: 10 }, (_, i) => doc(`d${batch}-${i}.txt`, [text(batch * 10 + i)])));
    written += 10;
  }
  const wal = fs.statSync(`${index.filePath(collection)}-wal`).size;
  assert.equal(pageSize(index.filePath(collection)), 16 * 1024);
  assert.ok(wal > 0 && wal < 6 * 1024 * 1024, `WAL of ${wal} bytes after ${written} documents`);
});

test("SQLite: a new index file has 16 KB pages, and its documents are written, found, replaced and removed", async () => {
  const { dir, collection } = await sqlite.newIndex();
  const index = new SqliteFtsIndex({ dir: dir! });
  closers.push(() => index.close());
  await index.upsertDocuments(collection, [doc("a.txt", ["the osprey dives", "for fish"]), doc("b.txt", ["a heron waits"])]);
  assert.equal(pageSize(index.filePath(collection)), 16 * 1024);
  assert.equal((await index.search(collection, "osprey", 10))[0]?.path, "a.txt");
  await index.upsertDocument(collection, doc("a.txt", ["now about herons"]));
  assert.deepEqual((await index.search(collection, "osprey", 10)).map((h) => h.path), []);
  await index.removeDocuments(collection, SOURCE, ["b.txt"]);
  assert.deepEqual((await index.search(collection, "heron", 10)).map((h) => h.path), ["a.txt"]);
});

test("SQLite threaded: reader threads answer from a version-1 file (the writer upgrades it on first read)", async () => {
  const { dir, collection } = await sqlite.newIndex();
  fs.mkdirSync(dir!, { recursive: true });
  writeVersion1File(path.join(dir!, `${collection}.db`));
  const index = new ThreadedSqliteIndex({ dir: dir!, readers: { threads: 1, queueLimit: 8 }, searchCacheBytes: loadConfig({}).searchCacheBytes });
  closers.push(() => index.close());
  const hits = await index.search(collection, "highlighter", 10);
  assert.equal(hits[0]?.path, "rare/pens.txt");
  assert.equal(hits[0].exact, true);
  assert.equal((await index.listDocuments(collection, 0, 100)).total, 13);
});

/** A SQLite index whose ranking limits are lowered, so a few chunks take the paths of a big collection. */
async function limitedIndex(ranking: { window: number; commonFrom: number; commonSample: number }): Promise<{ index: SqliteFtsIndex; collection: string }> {
  const { dir, collection } = await sqlite.newIndex();
  const index = new SqliteFtsIndex({ dir: dir!, ranking });
  closers.push(() => index.close());
  return { index, collection };
}

test("SQLite: a word in most chunks of a big collection still filters but is not scored; alone, its title hits come first, newest first", async () => {
  const { index, collection } = await limitedIndex({ window: 1000, commonFrom: 10, commonSample: 5 });
  const filler = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor";
  await index.upsertDocuments(collection, [
    doc("titled/0.txt", [`otter ${filler}`], { title: "Otter survey" }),
    doc("heron/title.txt", [`otter ${filler} heron`], { title: "Heron notes" }),
    doc("heron/body.txt", [`otter ${filler} ${filler} heron ${filler}`], { title: "Notes" }),
    // bm25 would put this short chunk full of the word high; unscored, only its age counts.
    doc("dense.txt", ["otter otter otter otter"], { title: "Dense" }),
    ...Array.from({ length: 20 }, (_, i) => doc(`plain/${String(i).padStart(2, "0")}.txt`, [`otter ${filler} ${i}`], { title: `Page ${i}` })),
  ]);
  // "otter" is in every chunk (common), "heron" in two: only chunks with both, ranked by heron's bm25 (title first).
  const both = await index.search(collection, "otter heron", 10);
  assert.deepEqual(both.map((h) => h.path), ["heron/title.txt", "heron/body.txt"]);
  assert.ok(both[0].score > both[1].score && both[1].score > 0);
  // "otter" alone: the chunk with it in its title first, then the newest others.
  const alone = await index.search(collection, "otter", 4);
  assert.deepEqual(alone.map((h) => h.path), ["titled/0.txt", "plain/19.txt", "plain/18.txt", "plain/17.txt"]);
  assert.ok(alone.every((h) => h.exact));
  // Any word: no chunk has "zebra", so the OR ranks it alone (nothing) and the chunks with the common word follow.
  const any = await index.search(collection, "otter zebra ", 3);
  assert.equal(any.length, 3);
  assert.ok(any.every((h) => h.matched === "any"));
  assert.deepEqual(any.map((h) => h.path), ["titled/0.txt", "plain/19.txt", "plain/18.txt"]);
});

/** The connection an index holds open (the only one in these tests), from its files' private map. */
function openConnection(index: SqliteFtsIndex): Database.Database {
  const [db] = (index as unknown as { files: { open: Map<string, Database.Database> } }).files.open.values();
  return db;
}

/** The SQL of every statement an index prepares on a collection's open file, from now on. */
function preparedSql(index: SqliteFtsIndex): string[] {
  const db = openConnection(index);
  const seen: string[] = [];
  const prepare = db.prepare.bind(db);
  db.prepare = ((sql: string) => {
    seen.push(sql);
    return prepare(sql);
  }) as typeof db.prepare;
  return seen;
}

test("SQLite: a common word in an AND, when the rarer words have no more matches than the window, is checked on the best rows only: the same hits and scores as the AND", async () => {
  const { dir, collection } = await sqlite.newIndex();
  const writer = new SqliteFtsIndex({ dir: dir! });
  closers.push(() => writer.close());
  const filler = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor";
  const herons = [
    doc("heron/title.txt", [`otter ${filler} heron`], { title: "Heron notes" }),
    doc("heron/two.txt", [`otter heron ${filler} heron`, `otter ${filler} heron heron heron`]),
    // The best heron chunk of all, but without the common word: the AND leaves it out.
    doc("heron/alone.txt", ["heron heron heron"]),
    doc("heron/body.txt", [`otter ${filler} ${filler} heron ${filler}`]),
  ];
  // Every fourth document a heron one, so "heron" is rare among the chunks and "otter" (in all the others) common.
  await writer.upsertDocuments(
    collection,
    Array.from({ length: 24 }, (_, i) => (i % 6 === 0 && herons[i / 6] ? herons[i / 6] : doc(`plain/${String(i).padStart(2, "0")}.txt`, [`otter ${filler} ${i}`]))),
  );
  const limits = { commonFrom: 10, commonSample: 5 };
  // Window 1,000: heron's 5 matches fit, so the new path. Window 4: more heron matches than that, so the AND
  // (whose window is then its 4 matches: all of them, the same set).
  const checked = new SqliteFtsIndex({ dir: dir!, readOnly: true, ranking: { window: 1000, ...limits } });
  const anded = new SqliteFtsIndex({ dir: dir!, readOnly: true, ranking: { window: 4, ...limits } });
  closers.push(() => checked.close(), () => anded.close());
  await checked.stats(collection);
  await anded.stats(collection);
  const checkedSql = preparedSql(checked);
  const andedSql = preparedSql(anded);
  for (const perDocument of [undefined, 1]) {
    const viaCheck = await checked.search(collection, "otter heron", 10, { perDocument });
    const viaAnd = await anded.search(collection, "otter heron", 10, { perDocument });
    assert.deepEqual(
      viaCheck.map((h) => [h.path, h.chunkIndex, h.score]),
      viaAnd.map((h) => [h.path, h.chunkIndex, h.score]),
    );
    assert.ok(!viaCheck.some((h) => h.path === "heron/alone.txt"));
    assert.ok(viaCheck.every((h, i) => i === 0 || viaCheck[i - 1].score >= h.score));
    assert.equal(viaCheck.filter((h) => h.path === "heron/two.txt").length, perDocument ?? 2);
  }
  const seek = "SELECT 1 FROM chunks_exact WHERE chunks_exact MATCH ? AND rowid = ?";
  assert.ok(checkedSql.includes(seek) && !checkedSql.some((sql) => sql.includes("also_window")));
  assert.ok(!andedSql.includes(seek));
  assert.ok(andedSql.some((sql) => sql.includes("also_window")));
});

test("SQLite: the writer's, the checking reader's and the main thread's (smallCache) connections keep a 2 MB page cache (better-sqlite3's default is 16 MB per open file)", async () => {
  const { dir, collection } = await sqlite.newIndex();
  const writer = new SqliteFtsIndex({ dir: dir! });
  const checking = new SqliteFtsIndex({ dir: dir!, readOnly: true, checkOnOpen: true });
  const mainThread = new SqliteFtsIndex({ dir: dir!, readOnly: true, smallCache: true });
  const searching = new SqliteFtsIndex({ dir: dir!, readOnly: true });
  closers.push(() => writer.close(), () => checking.close(), () => mainThread.close(), () => searching.close());
  await writer.upsertDocument(collection, doc("a.txt", ["some words to index"]));
  await writer.release(collection);
  await writer.stats(collection); // reopened: an existing file, quick_check at open
  await checking.stats(collection);
  await mainThread.stats(collection);
  await searching.search(collection, "words", 10);
  const cacheKib = (index: SqliteFtsIndex) => {
    return openConnection(index).pragma("cache_size", { simple: true });
  };
  assert.equal(cacheKib(writer), -2000);
  assert.equal(cacheKib(checking), -2000);
  assert.equal(cacheKib(mainThread), -2000);
  assert.equal(cacheKib(searching), -16000, "search reader threads keep the build's default");
});

test("parseQuery turns input into quoted units", () => {
  assert.deepEqual(parseQuery('find "exact phrase" e-mail col:x AND'), [
    { tokens: ["find"], prefix: false },
    { tokens: ["exact", "phrase"], prefix: false },
    { tokens: ["e", "mail"], prefix: false },
    { tokens: ["col", "x"], prefix: false },
    { tokens: ["AND"], prefix: true },
  ]);
  assert.deepEqual(parseQuery('"a b"'), [{ tokens: ["a", "b"], prefix: false }]);
  assert.deepEqual(parseQuery("* - ( ) \""), []);
});

test("SQLite: an index file of schema version 5 (before files without text were remembered) is upgraded when opened, keeps its documents and takes marks", async () => {
  const { dir, collection } = await sqlite.newIndex();
  fs.mkdirSync(dir!, { recursive: true });
  const file = path.join(dir!, `${collection}.db`);
  const old = new Database(file);
  for (let step = 1; step <= 5; step++) old.exec(SQLITE_INDEX_MIGRATIONS[step]);
  old.prepare("INSERT INTO documents (id, source_id, path, title, size, modified_at, version, chunk_count, indexed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)").run(crypto.randomUUID(), SOURCE, "old.txt", "old.txt", 5, 0, null, 0, 0);
  old.pragma("user_version = 5");
  old.close();

  const index = new SqliteFtsIndex({ dir: dir! });
  closers.push(() => index.close());
  assert.deepEqual([...(await index.indexedState(collection, SOURCE)).keys()], ["old.txt"]);
  await index.markEmpty(collection, SOURCE, [{ path: "photo.png", size: 7, modifiedAt: new Date(0), version: null }]);
  assert.equal((await index.indexedState(collection, SOURCE)).get("photo.png")?.empty, true);
  const upgraded = new Database(file, { readonly: true });
  try {
    assert.equal(upgraded.pragma("user_version", { simple: true }), SCHEMA_VERSION);
  } finally {
    upgraded.close();
  }
});
