import assert from "node:assert/strict";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { ServiceUnavailableError } from "../../server/errors";
import { BUSY_RETRY_AFTER_SECONDS, IndexReaderPool } from "../../server/search/index-reader-pool";
import type { DocumentInput } from "../../server/search/search-index";
import { SqliteFtsIndex } from "../../server/search/sqlite";
import { fillerParagraph } from "../fixtures/documents";

// Searches on reader threads (read-only connections) answer exactly what the caller's thread answers.

const root = fs.mkdtempSync(path.join(os.tmpdir(), "sluice-readers-"));
const dir = path.join(root, "indexes");
const collection = crypto.randomUUID();
const writer = new SqliteFtsIndex({ dir });
const mainThread = new SqliteFtsIndex({ dir, readOnly: true });
const pools: IndexReaderPool[] = [];

function doc(i: number, extra = ""): DocumentInput {
  return {
    sourceId: "src",
    path: `folder-${i % 7}/file-${i}.md`,
    title: i % 5 === 0 ? `Café report ${i}` : `Notes ${i}`,
    size: 1000 + i,
    modifiedAt: new Date(1_700_000_000_000 + i),
    version: null,
    chunks: [0, 1, 2].map((chunkIndex) => ({ chunkIndex, text: `${fillerParagraph(i * 3 + chunkIndex)} ${extra}` })),
  };
}

function pool(threads: number, queueLimit: number): IndexReaderPool {
  const made = new IndexReaderPool({ dir, threads, queueLimit });
  pools.push(made);
  return made;
}

before(async () => {
  await writer.upsertDocuments(collection, Array.from({ length: 300 }, (_, i) => doc(i, i % 3 === 0 ? "heron ledger" : "")));
});

after(async () => {
  for (const p of pools) await p.close();
  await writer.close();
  await mainThread.close();
  fs.rmSync(root, { recursive: true, force: true });
});

describe("IndexReaderPool", () => {
  it("answers every query exactly as the caller's thread does", async () => {
    const readers = pool(2, 64);
    const words = fillerParagraph(1).split(/\s+/).slice(0, 4);
    const queries = ["heron", "heron ledger", '"heron ledger"', "cafe", "report", `${words[0]} ${words[1]}`, `${words[2]}*`, "led", "heron zzzqqq", "zzzqqq", ""];
    for (const q of queries) {
      for (const topK of [1, 10, 50]) {
        const expected = await mainThread.search(collection, q, topK);
        assert.deepEqual(await readers.run("search", collection, q, topK), expected, `search ${JSON.stringify(q)} top ${topK}`);
      }
    }
    assert.ok((await mainThread.search(collection, "heron", 10)).length === 10, "the comparison covers real hits");
    assert.deepEqual(await readers.run("listDocuments", collection, 20, 15), await mainThread.listDocuments(collection, 20, 15));
    // Many at once across both threads: each answer is its own query's.
    const many = await Promise.all(queries.map((q) => readers.run("search", collection, q, 5)));
    for (const [i, q] of queries.entries()) assert.deepEqual(many[i], await mainThread.search(collection, q, 5), q);
  });

  it("sees what the writer commits after it opened the file, and a collection created after a search found none", async () => {
    const readers = pool(1, 8);
    assert.equal((await readers.run("search", collection, "platypus", 5)).length, 0);
    await writer.upsertDocument(collection, doc(1000, "platypus"));
    assert.equal((await readers.run("search", collection, "platypus", 5))[0]?.path, "folder-6/file-1000.md");

    const later = crypto.randomUUID();
    assert.deepEqual(await readers.run("search", later, "heron", 5), []);
    await writer.upsertDocument(later, doc(2000, "heron"));
    assert.deepEqual((await readers.run("search", later, "heron", 5)).map((h) => h.path), Array(3).fill("folder-5/file-2000.md"), "its three chunks");
  });

  it("sheds what its bounded queue cannot hold with 503 and Retry-After, and answers the rest", async () => {
    const readers = pool(1, 2);
    const expected = await mainThread.search(collection, "heron ledger", 10);
    const outcomes = await Promise.allSettled(Array.from({ length: 12 }, () => readers.run("search", collection, "heron ledger", 10)));
    const served = outcomes.filter((o) => o.status === "fulfilled");
    const shed = outcomes.filter((o) => o.status === "rejected");
    // One running and two waiting; the other nine were asked for in the same turn, while all three were taken.
    assert.equal(served.length, 3);
    for (const o of served) assert.deepEqual((o as PromiseFulfilledResult<unknown>).value, expected);
    for (const o of shed) {
      const error = (o as PromiseRejectedResult).reason;
      assert.ok(error instanceof ServiceUnavailableError, String(error));
      assert.equal(error.retryAfterSeconds, BUSY_RETRY_AFTER_SECONDS);
      assert.match(error.detail, /busy/);
    }
    // Once drained it takes work again.
    assert.deepEqual(await readers.run("search", collection, "heron ledger", 10), expected);
  });

  it("lets go of a collection's file on release, so it can be deleted", async () => {
    const readers = pool(2, 8);
    const gone = crypto.randomUUID();
    await writer.upsertDocument(gone, doc(3000, "walrus"));
    assert.equal((await readers.run("search", gone, "walrus", 5)).length, 3, "its three chunks");
    await readers.broadcast("release", gone);
    await writer.drop(gone);
    assert.deepEqual(await readers.run("search", gone, "walrus", 5), []);
  });
});
