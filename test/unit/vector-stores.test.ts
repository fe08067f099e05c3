import assert from "node:assert/strict";
import crypto from "node:crypto";
import os from "node:os";
import { after, describe, it } from "node:test";
import type { DataSource } from "typeorm";
import { openDatabase } from "../../server/data/data-source";
import { PostgresVectorStore } from "../../server/search/postgres-vector-store";
import { SqliteVecStore } from "../../server/search/sqlite-vec-store";
import { normalise, type ChunkVector, type VectorStore } from "../../server/search/vector-store";
import { embedCollection } from "../../server/search/embed-collection";
import { SqliteFtsIndex } from "../../server/search/sqlite-fts-index";
import { postgresBinDir, sharedPostgres } from "../fixtures/postgres";
import { tempDir } from "../fixtures/sluice-server";

const closers: Array<() => Promise<unknown>> = [];
after(async () => {
  for (const close of closers.reverse()) await close();
});

const row = (documentId: string, chunkIndex: number, values: number[], hash = `${documentId}-${chunkIndex}`): ChunkVector => ({
  documentId, sourceId: "src", chunkIndex, path: `${documentId}.txt`, title: documentId, preview: `text of ${documentId}`, hash, vector: normalise(values),
});

let pgStore: Promise<PostgresVectorStore> | null = null;
const engines: Array<{ name: string; skip: string | null; open(): Promise<VectorStore> }> = [
  {
    name: "sqlite-vec",
    skip: null,
    async open() {
      const store = new SqliteVecStore(tempDir("sluice-vectors-"));
      closers.push(() => store.close());
      return store;
    },
  },
  {
    name: "PostgreSQL exact similarity (no pgvector)",
    skip: postgresBinDir() ? null : "PostgreSQL is not installed",
    async open() {
      pgStore ??= (async () => {
        const cluster = await sharedPostgres();
        const db: DataSource = await openDatabase({ dataDir: os.tmpdir(), databaseUrl: await cluster.createDatabase() });
        closers.push(() => db.destroy());
        return PostgresVectorStore.open(db, true);
      })();
      return pgStore;
    },
  },
];

for (const engine of engines) {
  describe(`vector store: ${engine.name}`, { skip: engine.skip ?? false }, () => {
    it("answers the nearest chunks by cosine similarity, nearest first", async () => {
      const store = await engine.open();
      const c = crypto.randomUUID();
      await store.put(c, "m", [row("x", 0, [1, 0, 0]), row("y", 0, [0.8, 0.6, 0]), row("z", 0, [0, 0, 1])]);
      const hits = await store.search(c, normalise([1, 0.1, 0]), 2);
      assert.deepEqual(hits.map((h) => h.documentId), ["x", "y"]);
      assert.ok(Math.abs(hits[0].similarity - 1 / Math.hypot(1, 0.1)) < 1e-5, String(hits[0].similarity));
      assert.equal(hits[0].preview, "text of x");
      assert.equal(hits[0].sourceId, "src");
      assert.deepEqual(await store.search(crypto.randomUUID(), normalise([1, 0, 0]), 2), []);
    });

    it("counts chunks per document, reuses vectors by hash, removes documents, and forgets another model's vectors", async () => {
      const store = await engine.open();
      const c = crypto.randomUUID();
      await store.put(c, "m", [row("x", 0, [1, 0]), row("x", 1, [0, 1], "shared"), row("y", 0, [1, 1])]);
      assert.deepEqual([...(await store.embeddedDocuments(c, "m"))].sort(), [["x", 2], ["y", 1]]);
      const reused = await store.vectorsByHash(c, ["shared", "absent"]);
      assert.deepEqual([...reused.keys()], ["shared"]);
      assert.ok(Math.abs(reused.get("shared")![1] - 1) < 1e-6);
      await store.removeDocuments(c, ["x"]);
      assert.deepEqual([...(await store.search(c, normalise([1, 0]), 5))].map((h) => h.documentId), ["y"]);
      assert.equal((await store.embeddedDocuments(c, "other-model")).size, 0);
      assert.deepEqual(await store.search(c, normalise([1, 0]), 5), []);
      await store.put(c, "m", [row("y", 0, [1, 1])]);
      await store.drop(c);
      assert.equal((await store.embeddedDocuments(c, "m")).size, 0);
    });
  });
}

describe("embedCollection", () => {
  it("embeds only documents without vectors, reuses an unchanged chunk's vector and drops vectors of gone documents", async () => {
    const index = new SqliteFtsIndex({ dir: tempDir("sluice-embed-index-") });
    const vectors = new SqliteVecStore(tempDir("sluice-embed-vectors-"));
    closers.push(() => index.close(), () => vectors.close());
    const sent: string[] = [];
    const embedder = { embed: async (_model: string, inputs: string[]) => {
        sent.push(...inputs);
        return inputs.map((t) => [t.length, 1, t.charCodeAt(0)]);
      },
    };
    const c = crypto.randomUUID();
    const doc = (p: string, texts: string[]) => ({ sourceId: "s", path: p, title: p, size: 1, modifiedAt: new Date(0), version: null, chunks: texts.map((text, chunkIndex) => ({ chunkIndex, text })) });
    await index.upsertDocuments(c, [doc("a", ["alpha one", "alpha two"]), doc("b", ["beta"])]);
    const progress: string[] = [];
    assert.deepEqual(await embedCollection({ index, vectors, embedder }, c, "m", (t) => progress.push(t)), { embedded: 3, reused: 0, removed: 0 });
    assert.match(progress[0], /^Embedding a \(1 of 2 documents/);
    assert.deepEqual(await embedCollection({ index, vectors, embedder }, c, "m", () => undefined), { embedded: 0, reused: 0, removed: 0 });
    sent.length = 0;
    await index.upsertDocuments(c, [doc("a", ["alpha one", "alpha changed"])]);
    await index.removeDocuments(c, "s", ["b"]);
    assert.deepEqual(await embedCollection({ index, vectors, embedder }, c, "m", () => undefined), { embedded: 1, reused: 1, removed: 2 });
    assert.deepEqual(sent, ["alpha changed"]);
    assert.deepEqual([...(await vectors.embeddedDocuments(c, "m")).values()], [2]);
  });
});
