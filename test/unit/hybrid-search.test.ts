import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { hybridSearch, reciprocalRankFusion, RRF_K, vectorHitAsSearchHit } from "../../server/search/hybrid";
import type { SearchHit } from "../../server/search/search-index";

const hit = (documentId: string, chunkIndex = 0, snippet = documentId): SearchHit => ({ documentId, sourceId: "s", chunkIndex, path: `${documentId}.txt`, title: documentId, snippet, text: snippet, score: 0, exact: false, matched: "all", page: null, locationLabel: null, scanned: false });

describe("reciprocal rank fusion", () => {
  it("scores each chunk by the sum of 1/(k + rank) over the rankings that have it", () => {
    const fused = reciprocalRankFusion([[hit("a"), hit("b")], [hit("b"), hit("c")]], 10);
    assert.deepEqual(fused.map((h) => h.documentId), ["b", "a", "c"]);
    assert.equal(fused[0].score, 1 / (RRF_K + 2) + 1 / (RRF_K + 1));
    assert.equal(fused[1].score, 1 / (RRF_K + 1));
    assert.equal(fused[2].score, 1 / (RRF_K + 2));
  });

  it("tells chunks of one document apart, keeps the first ranking's snippet, and cuts at topK", () => {
    const fused = reciprocalRankFusion([[hit("a", 0, "<mark>kw</mark>"), hit("a", 1)], [hit("a", 0, "plain"), hit("z")]], 2);
    assert.equal(fused.length, 2);
    assert.deepEqual([fused[0].documentId, fused[0].chunkIndex, fused[0].snippet], ["a", 0, "<mark>kw</mark>"]);
  });

  it("hybridSearch asks both rankings for more than topK and escapes semantic previews", async () => {
    const asked: number[] = [];
    const fused = await hybridSearch(
      async (k) => {
        asked.push(k);
        return [hit("a"), hit("b")];
      },
      async (k) => {
        asked.push(k);
        return [{ documentId: "b", sourceId: "s", chunkIndex: 0, path: "b.txt", title: "b", preview: "x", similarity: 0.9 }, { documentId: "c", sourceId: "s", chunkIndex: 0, path: "c.txt", title: "c", preview: "<b>&", similarity: 0.5 }];
      },
      3,
    );
    assert.deepEqual(asked, [20, 20]);
    assert.deepEqual(fused.map((h) => h.documentId), ["b", "a", "c"]);
    assert.equal(fused[2].snippet, "&#60;b&#62;&#38;");
    assert.equal(vectorHitAsSearchHit({ documentId: "d", sourceId: "s", chunkIndex: 2, path: "p", title: "t", preview: "'q'", similarity: 0.25 }).score, 0.25);
  });

  it("hybridSearch reads back only the hits the vector ranking alone found, in place, and leaves out one it cannot read", async () => {
    const vector = (documentId: string, similarity: number) => ({ documentId, sourceId: "s", chunkIndex: 0, path: `${documentId}.txt`, title: documentId, preview: "p", similarity });
    const readBackOf: string[][] = [];
    const fused = await hybridSearch(
      async () => [{ ...hit("a"), page: 3, locationLabel: "page 3" }],
      async () => [vector("a", 0.9), vector("c", 0.8), vector("gone", 0.7)],
      5,
      async (hits) => {
        readBackOf.push(hits.map((h) => h.documentId));
        return hits.filter((h) => h.documentId !== "gone").map((h) => ({ ...h, text: "whole text", page: 9, locationLabel: "page 9", scanned: true }));
      },
    );
    assert.deepEqual(readBackOf, [["c", "gone"]]);
    assert.deepEqual(fused.map((h) => [h.documentId, h.page, h.locationLabel, h.scanned]), [["a", 3, "page 3", false], ["c", 9, "page 9", true]]);
    assert.ok(fused[0].score > fused[1].score && fused[1].score > 0, "the fused scores are kept");
  });
});
