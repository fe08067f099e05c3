import assert from "node:assert/strict";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, test } from "node:test";
import Database from "better-sqlite3";
import type { DataSource } from "typeorm";
import { CollectionRetrieval } from "../../server/collections/collection-retrieval";
import { openDatabase } from "../../server/data/data-source";
import { OllamaClient } from "../../server/llm/ollama.client";
import { embedCollection } from "../../server/search/embed-collection";
import { PostgresFtsIndex, PostgresVectorStore } from "../../server/search/postgres";
import { SCHEMA_VERSION as PG_SCHEMA_VERSION } from "../../server/search/postgres/postgres-fts-schema";
import type { DocumentInput, SearchIndex } from "../../server/search/search-index";
import { SQLITE_INDEX_MIGRATIONS, SqliteFtsIndex, SqliteVecStore } from "../../server/search/sqlite";
import type { VectorStore } from "../../server/search/vector-store";
import { startFakeOllama } from "../fixtures/fake-ollama";
import { postgresBinDir, sharedPostgres } from "../fixtures/postgres";

// Where each chunk is (issue 35): both engines keep a chunk's page, its place in words and
// whether OCR read it, answer them with every hit, and mark the paged documents an older build
// indexed, so the next run reads them again for their pages.
const SOURCE = "8f0c2a4e-5d1b-4c3a-9e7f-0a1b2c3d4e5f";
const cleanups: Array<() => Promise<void> | void> = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sluice-locations-"));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function postgresDb(): Promise<DataSource> {
  const cluster = await sharedPostgres();
  const db = await openDatabase({ dataDir: os.tmpdir(), databaseUrl: await cluster.createDatabase() });
  cleanups.push(() => db.destroy());
  return db;
}

const engines: Array<{ name: string; skip: string | false; open(): Promise<SearchIndex>; openWithVectors(): Promise<{ index: SearchIndex; vectors: VectorStore }> }> = [
  {
    name: "SQLite FTS5",
    skip: false,
    async open() {
      const index = new SqliteFtsIndex({ dir: path.join(tempDir(), "indexes") });
      cleanups.push(() => index.close());
      return index;
    },
    async openWithVectors() {
      const dir = tempDir();
      const index = new SqliteFtsIndex({ dir: path.join(dir, "indexes") });
      const vectors = new SqliteVecStore(path.join(dir, "vectors"));
      cleanups.push(() => index.close(), () => vectors.close());
      return { index, vectors };
    },
  },
  {
    name: "PostgreSQL full-text",
    skip: postgresBinDir() ? false : "PostgreSQL is not installed",
    open: async () => new PostgresFtsIndex(await postgresDb()),
    async openWithVectors() {
      const db = await postgresDb();
      // The exact-similarity fallback: Debian 12 packages no pgvector (the fallback is what this machine has).
      return { index: new PostgresFtsIndex(db), vectors: await PostgresVectorStore.open(db, true) };
    },
  },
];

function doc(p: string, chunks: DocumentInput["chunks"]): DocumentInput {
  return { sourceId: SOURCE, path: p, title: path.basename(p), size: 100, modifiedAt: new Date("2024-05-01T10:00:00.000Z"), version: null, chunks };
}

const place = (hit: { path: string; page: number | null; locationLabel: string | null; scanned: boolean }) => [hit.path, hit.page, hit.locationLabel, hit.scanned];

for (const engine of engines) {
  describe(engine.name, { skip: engine.skip }, () => {
    test("a hit answers its chunk's page, place and whether it came from a scan; unpaged chunks answer null", async () => {
      const index = await engine.open();
      const collection = crypto.randomUUID();
      await index.upsertDocuments(collection, [
        doc("manual.pdf", [
          { chunkIndex: 0, text: "The cormorant chapter opens the manual.", page: 1, location: "page 1", scanned: false },
          { chunkIndex: 1, text: "A scanned appendix lists every cormorant nest.", page: 7, location: "page 7", scanned: true },
        ]),
        doc("deck.pptx", [{ chunkIndex: 0, text: "Cormorant counts by year.", page: 3, location: "slide 3", scanned: false }]),
        doc("book.xlsx", [{ chunkIndex: 0, text: "Budget cormorant feed 120", page: null, location: "sheet Budget", scanned: false }]),
        doc("notes.txt", [{ chunkIndex: 0, text: "A cormorant on the pier." }]),
      ]);
      const staged = await index.stageDocument(collection, { ...doc("scan.tiff", []) });
      await staged.addChunks([{ chunkIndex: 0, text: "A faxed cormorant report.", page: 2, location: "page 2", scanned: true }]);
      await staged.commit();
      const hits = await index.search(collection, "cormorant", 10);
      assert.deepEqual(hits.map(place).sort(), [
        ["book.xlsx", null, "sheet Budget", false],
        ["deck.pptx", 3, "slide 3", false],
        ["manual.pdf", 1, "page 1", false],
        ["manual.pdf", 7, "page 7", true],
        ["notes.txt", null, null, false],
        ["scan.tiff", 2, "page 2", true],
      ]);
    });

    test("a hit found only by meaning says its page, place and whether it came from a scan, as one found by words does", async () => {
      const { index, vectors } = await engine.openWithVectors();
      const fake = await startFakeOllama();
      cleanups.push(() => fake.close());
      const ollama = new OllamaClient(fake.url);
      await ollama.pull("nomic-embed-text", () => undefined);
      const collection = crypto.randomUUID();
      // The fake model folds "car" and "automobile" together: no chunk has the word "car".
      await index.upsertDocuments(collection, [
        doc("fleet.pdf", [
          { chunkIndex: 0, text: "The harbour timetable for the ferry.", page: 1, location: "page 1", scanned: false },
          { chunkIndex: 1, text: "The scanned logbook of each automobile.", page: 6, location: "page 6", scanned: true },
        ]),
        doc("deck.pptx", [{ chunkIndex: 0, text: "Automobile sales by region, and the ferry.", page: 2, location: "slide 2", scanned: false }]),
        doc("notes.txt", [{ chunkIndex: 0, text: "An automobile parked by the pier." }]),
      ]);
      await embedCollection({ index, vectors, embedder: ollama }, collection, "nomic-embed-text", () => undefined);
      const retrieval = new CollectionRetrieval(index, vectors, ollama);
      const expected = [
        ["deck.pptx", 2, "slide 2", false],
        ["fleet.pdf", 6, "page 6", true],
        ["notes.txt", null, null, false],
      ];
      const semantic = await retrieval.search(collection, "nomic-embed-text", "car", 3, {}, "semantic");
      assert.deepEqual(semantic.map(place).sort(), expected);
      // Hybrid: "car" matches no word, so every hit is the vector ranking's alone.
      const hybrid = await retrieval.search(collection, "nomic-embed-text", "car", 3, {}, "hybrid");
      assert.deepEqual(hybrid.map(place).sort(), expected);
      const scannedHit = hybrid.find((hit) => hit.path === "fleet.pdf")!;
      assert.equal(scannedHit.text, "The scanned logbook of each automobile.", "the whole chunk from the index");
      // One found by both: the keyword hit's place, as before; "ferry" is only in the words.
      const both = await retrieval.search(collection, "nomic-embed-text", "ferry automobile", 5, {}, "hybrid");
      assert.deepEqual(both.map(place).sort(), [...expected, ["fleet.pdf", 1, "page 1", false]].sort());
      // An ask's passages are the same hits, with their places.
      const passages = await retrieval.passages(collection, "nomic-embed-text", "car", 3);
      assert.deepEqual(passages.map(place).sort(), expected);
      // A chunk gone from the index since its vector was read is left out, not shown without its place.
      await index.removeDocuments(collection, SOURCE, ["deck.pptx"]);
      const after = await retrieval.search(collection, "nomic-embed-text", "car", 3, {}, "semantic");
      assert.deepEqual(after.map(place).sort(), expected.filter(([file]) => file !== "deck.pptx"));
    });
  });
}

describe("indexes made before chunks kept their pages", () => {
  test("SQLite: a file of schema 4 is upgraded; its PDFs, PPTX and XLSX files are marked to be read again, the rest left alone", async () => {
    const dir = path.join(tempDir(), "indexes");
    fs.mkdirSync(dir, { recursive: true });
    const collection = crypto.randomUUID();
    const old = new Database(path.join(dir, `${collection}.db`));
    for (let step = 1; step <= 4; step++) old.exec(SQLITE_INDEX_MIGRATIONS[step]);
    const insertDoc = old.prepare("INSERT INTO documents VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
    const insertChunk = old.prepare("INSERT INTO chunks (document_id, chunk_index) VALUES (?, ?)");
    const insertFts = old.prepare("INSERT INTO chunks_fts (rowid, title, path, body) VALUES (?, ?, ?, ?)");
    for (const [p, version] of [["a/Report.PDF", null], ["b/deck.pptx", null], ["c/book.xlsx", "drive-rev-4"], ["d/notes.txt", null]] as const) {
      const id = crypto.randomUUID();
      insertDoc.run(id, SOURCE, p, p, 10, 1000, version, 1, 0);
      insertFts.run(insertChunk.run(id, 0).lastInsertRowid, p, p, "the heron log");
    }
    old.exec("INSERT INTO chunks_exact (rowid, title, path, body) SELECT rowid, title, path, body FROM chunks_fts");
    old.pragma("user_version = 4");
    old.close();

    const index = new SqliteFtsIndex({ dir });
    cleanups.push(() => index.close());
    const state = await index.indexedState(collection, SOURCE);
    assert.deepEqual([...state.entries()].map(([p, s]) => [p, s.version]).sort(), [
      ["a/Report.PDF", "pages-pending"],
      ["b/deck.pptx", "pages-pending"],
      ["c/book.xlsx", "pages-pending"],
      ["d/notes.txt", null],
    ]);
    const hits = await index.search(collection, "heron", 10);
    assert.equal(hits.length, 4);
    assert.ok(hits.every((hit) => hit.page === null && hit.locationLabel === null && !hit.scanned), "old chunks have no place until read again");
  });

  test("PostgreSQL: tables of schema 5 get the columns; paged documents are marked to be read again", { skip: postgresBinDir() ? false : "PostgreSQL is not installed" }, async () => {
    const db = await postgresDb();
    const collection = crypto.randomUUID();
    const before = new PostgresFtsIndex(db);
    await before.upsertDocuments(collection, [doc("a/Report.pdf", [{ chunkIndex: 0, text: "the heron log" }]), doc("d/notes.txt", [{ chunkIndex: 0, text: "the heron log" }])]);
    // Back to what schema 5 made: no place columns.
    await db.query("ALTER TABLE search_chunks DROP COLUMN page, DROP COLUMN location, DROP COLUMN scanned");
    await db.query("UPDATE search_schema SET version = 5");

    const index = new PostgresFtsIndex(db);
    const state = await index.indexedState(collection, SOURCE);
    assert.deepEqual([...state.entries()].map(([p, s]) => [p, s.version]).sort(), [
      ["a/Report.pdf", "pages-pending"],
      ["d/notes.txt", null],
    ]);
    assert.deepEqual(await db.query("SELECT version FROM search_schema"), [{ version: PG_SCHEMA_VERSION }], "and on to the current version");
    const hits = await index.search(collection, "heron", 10);
    assert.ok(hits.length === 2 && hits.every((hit) => hit.page === null && !hit.scanned));
  });
});
