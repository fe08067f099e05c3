import assert from "node:assert/strict";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import type { SearchHit } from "../../server/search/search-index";
import { SearchResultCache } from "../../server/search/search-result-cache";
import { SqliteFtsIndex } from "../../server/search/sqlite";
import { ThreadedSqliteIndex } from "../../server/search/threaded-index";
import { loadConfig } from "../../server/config";
import { fillerParagraph } from "../fixtures/documents";

function hit(text: string): SearchHit {
  return { documentId: "d", sourceId: "s", path: "a.txt", title: "a", chunkIndex: 0, snippet: text, text, score: 1, exact: true, matched: "all", page: null, locationLabel: null, scanned: false };
}

describe("SearchResultCache", () => {
  it("answers an entry only for the version it was stored under", () => {
    const cache = new SearchResultCache(1_000_000);
    const key = SearchResultCache.key("c", "heron", 10, {});
    cache.set(key, "c", "1:a", [hit("one")]);
    assert.equal(cache.get(key, "1:a")?.[0].text, "one");
    assert.equal(cache.get(key, "2:a"), undefined, "another version is a miss");
    assert.equal(cache.get(key, "1:a"), undefined, "and the stale entry is gone");
  });

  it("keeps within its byte budget, least recently used out first", () => {
    const big = "x".repeat(1000);
    // One entry is about 4.3 kB here (key, text and snippet as UTF-16, the per-hit estimate): three fit, four do not.
    const cache = new SearchResultCache(15_000);
    const keys = ["a", "b", "c", "d"].map((q) => SearchResultCache.key("c", q, 10, {}));
    for (const key of keys.slice(0, 3)) cache.set(key, "c", "v", [hit(big)]);
    assert.ok(cache.get(keys[0], "v"), "a is used, so b is now the oldest");
    cache.set(keys[3], "c", "v", [hit(big)]);
    assert.equal(cache.get(keys[1], "v"), undefined);
    assert.ok(cache.get(keys[0], "v") && cache.get(keys[2], "v") && cache.get(keys[3], "v"));
    // An answer larger than the whole budget is not kept at all.
    cache.set(SearchResultCache.key("c", "huge", 10, {}), "c", "v", [hit("y".repeat(100_000))]);
    assert.equal(cache.get(SearchResultCache.key("c", "huge", 10, {}), "v"), undefined);
  });

  it("forgets one collection's entries, and hands out frozen hits", () => {
    const cache = new SearchResultCache(1_000_000);
    const stored = cache.set(SearchResultCache.key("c1", "q", 10, {}), "c1", "v", [hit("one")]);
    cache.set(SearchResultCache.key("c2", "q", 10, {}), "c2", "v", [hit("two")]);
    assert.throws(() => ((stored[0] as { text: string }).text = "changed"), TypeError);
    cache.forget("c1");
    assert.equal(cache.get(SearchResultCache.key("c1", "q", 10, {}), "v"), undefined);
    assert.ok(cache.get(SearchResultCache.key("c2", "q", 10, {}), "v"));
  });
});

describe("ThreadedSqliteIndex search cache", () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "sluice-search-cache-"));
  const dir = path.join(root, "indexes");
  const collection = crypto.randomUUID();
  const index = new ThreadedSqliteIndex({ dir, readers: { threads: 1, queueLimit: 16 }, searchCacheBytes: loadConfig({}).searchCacheBytes });
  // Idle index threads do not keep a process alive (in the server its listening socket does): this does, meanwhile.
  const alive = setInterval(() => undefined, 1000);
  after(async () => {
    await index.close();
    clearInterval(alive);
    fs.rmSync(root, { recursive: true, force: true });
  });
  const doc = (name: string, text: string) => ({ sourceId: "s1", path: name, title: name, size: text.length, modifiedAt: new Date(), version: null, chunks: [{ chunkIndex: 0, text }] });

  it("answers a repeated search from memory, and a write to the collection shows at once", async () => {
    await index.upsertDocuments(collection, [doc("first.txt", `${fillerParagraph(1, 50)} pelican`)]);
    const before = await index.search(collection, "pelican", 10);
    assert.deepEqual(before.map((h) => h.path), ["first.txt"]);
    assert.equal(await index.search(collection, "pelican", 10), before, "the same answer object: from the cache");
    await index.upsertDocuments(collection, [doc("second.txt", `${fillerParagraph(2, 50)} pelican pelican`)]);
    const after = await index.search(collection, "pelican", 10);
    assert.deepEqual(after.map((h) => h.path).sort(), ["first.txt", "second.txt"]);
    await index.removeDocuments(collection, "s1", ["first.txt"]);
    assert.deepEqual((await index.search(collection, "pelican", 10)).map((h) => h.path), ["second.txt"]);
  });

  it("sees a commit made by another connection (another process's writer)", async () => {
    const other = new SqliteFtsIndex({ dir });
    const cached = await index.search(collection, "pelican", 10);
    assert.equal(await index.search(collection, "pelican", 10), cached);
    await other.upsertDocuments(collection, [doc("third.txt", `${fillerParagraph(3, 50)} pelican`)]);
    await other.close();
    assert.deepEqual((await index.search(collection, "pelican", 10)).map((h) => h.path).sort(), ["second.txt", "third.txt"]);
  });

  it("is off with a budget of 0", async () => {
    const uncached = new ThreadedSqliteIndex({ dir, readers: { threads: 1, queueLimit: 16 }, searchCacheBytes: 0 });
    try {
      const first = await uncached.search(collection, "pelican", 10);
      const second = await uncached.search(collection, "pelican", 10);
      assert.notEqual(first, second);
      assert.deepEqual(first, second);
    } finally {
      await uncached.close();
    }
  });
});
