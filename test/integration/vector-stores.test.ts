import assert from "node:assert/strict";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { after, describe, it } from "node:test";
import type { DataSource } from "typeorm";
import { openDatabase } from "../../server/data/data-source";
import { PostgresVectorStore } from "../../server/search/postgres";
import { SqliteVecStore, vecExtensionPath } from "../../server/search/sqlite";
import { sqliteNativeBinding } from "../../server/data/sqlite-binding";
import { normalise, type ChunkVector, type VectorStore } from "../../server/search/vector-store";
import { embedCollection } from "../../server/search/embed-collection";
import { SqliteFtsIndex } from "../../server/search/sqlite";
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

describe("sqlite-vec: a big collection's two-stage search (1-bit candidates, then exact cosine)", () => {
  it("finds the same nearest chunks, with the same similarities, as an exact search; removed chunks stay out", async () => {
    const dims = 64;
    let seed = 42;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return (seed / 2 ** 31) * 2 - 1;
    };
    const query = Array.from({ length: dims }, random);
    // Five chunks planted near the query at growing distances, among 1,000 random ones.
    const planted = [0.05, 0.1, 0.2, 0.3, 0.4].map((noise, i) => row(`near-${i}`, 0, query.map((v) => v + noise * random())));
    const others = Array.from({ length: 1000 }, (_, i) => row(`far-${i}`, 0, Array.from({ length: dims }, random)));
    const all = [...planted, ...others];
    const q = normalise(query);
    const exact = all
      .map((r) => ({ documentId: r.documentId, similarity: r.vector.reduce((sum, v, i) => sum + v * q[i], 0) }))
      .sort((a, b) => b.similarity - a.similarity)
      .slice(0, 5);
    const dir = tempDir("sluice-vectors-two-stage-");
    const twoStage = new SqliteVecStore(dir, { exactUpTo: 0 });
    closers.push(() => twoStage.close());
    const c = crypto.randomUUID();
    await twoStage.put(c, "m", all);
    const hits = await twoStage.search(c, q, 5);
    assert.deepEqual(hits.map((h) => h.documentId), exact.map((e) => e.documentId));
    for (const [i, h] of hits.entries()) assert.ok(Math.abs(h.similarity - exact[i].similarity) < 1e-5, `${h.similarity} vs ${exact[i].similarity}`);
    await twoStage.removeDocuments(c, [exact[0].documentId]);
    assert.deepEqual((await twoStage.search(c, q, 4)).map((h) => h.documentId), exact.slice(1).map((e) => e.documentId));

    // Files of the older layouts are brought up to date when opened, and search the same: the first
    // kept full vectors in a vec0 float table (no 1-bit copies), the second its 1-bit copies in a vec0 bit[] table.
    await twoStage.close();
    const layouts: Record<string, string> = {
      first: `DROP TABLE vector_signs; CREATE VIRTUAL TABLE vectors USING vec0(embedding float[${dims}] distance_metric=cosine);
        INSERT INTO vectors (rowid, embedding) SELECT rowid, embedding FROM vector_floats; DROP TABLE vector_floats;`,
      second: `DROP TABLE vector_signs; CREATE VIRTUAL TABLE vector_bits USING vec0(embedding bit[${dims}]);
        INSERT INTO vector_bits (rowid, embedding) SELECT rowid, vec_quantize_binary(embedding) FROM vector_floats;`,
    };
    for (const [layout, statements] of Object.entries(layouts)) {
      const file = new Database(path.join(dir, `${c}.db`), { nativeBinding: sqliteNativeBinding() });
      file.loadExtension(vecExtensionPath());
      file.exec(statements);
      file.close();
      const reopened = new SqliteVecStore(dir, { exactUpTo: 0 });
      assert.deepEqual((await reopened.search(c, q, 4)).map((h) => h.documentId), exact.slice(1).map((e) => e.documentId), layout);
      await reopened.close();
      const check = new Database(path.join(dir, `${c}.db`), { nativeBinding: sqliteNativeBinding(), readonly: true });
      const tables = (check.prepare("SELECT name FROM sqlite_master WHERE name IN ('vectors', 'vector_bits', 'vector_floats', 'vector_signs')").pluck().all() as string[]).sort();
      const signs = check.prepare("SELECT count(*) FROM vector_signs").pluck().get();
      check.close();
      assert.deepEqual(tables, ["vector_floats", "vector_signs"], layout);
      assert.equal(signs, all.length - 1, layout);
    }
  });
});

describe("sqlite-vec: collection files", () => {
  it("a collection id must be a UUID before it becomes a file name", async () => {
    const dir = tempDir("sluice-vectors-");
    const store = new SqliteVecStore(dir);
    closers.push(() => store.close());
    for (const bad of ["../escaped", "x", "", "00000000-0000-0000-0000-00000000000g"]) {
      await assert.rejects(store.put(bad, "m", [row("x", 0, [1, 0])]), /not found/i);
      await assert.rejects(store.search(bad, normalise([1, 0]), 1), /not found/i);
    }
    assert.deepEqual(fs.readdirSync(path.dirname(dir)).filter((name) => name.startsWith("escaped")), []);
  });
});
