import { test } from "node:test";
import assert from "node:assert/strict";
import { SpanEstimates } from "../../server/search/postgres/span-estimates";
import { windowSpan } from "../../server/search/postgres/postgres-fts-window";

const estimate = (chunks: number) => ({ exactMatches: 10, stemmedMatches: 20, chunks, drive: false });

test("an estimate is kept for its time to live, then asked again", () => {
  let now = 0;
  const estimates = new SpanEstimates(16_000, 1_000, 10, () => now);
  estimates.set("c1", "q1", estimate(50_000));
  now = 999;
  assert.deepEqual(estimates.get("q1"), estimate(50_000));
  now = 1_000;
  assert.equal(estimates.get("q1"), undefined);
  assert.equal(estimates.get("q1"), undefined, "an expired estimate is gone");
});

test("a collection last seen with fewer chunks than any span needs asks for no estimate until that is stale", () => {
  let now = 0;
  const estimates = new SpanEstimates(16_000, 1_000, 10, () => now);
  assert.equal(estimates.tooSmall("c1"), false, "unknown: ask");
  estimates.set("c1", "q1", estimate(15_999));
  estimates.set("c2", "q2", estimate(16_000));
  assert.equal(estimates.tooSmall("c1"), true);
  assert.equal(estimates.tooSmall("c2"), false);
  now = 1_000;
  assert.equal(estimates.tooSmall("c1"), false, "it may have grown since: ask again");
});

test("past its capacity the least recently used estimate goes first", () => {
  const estimates = new SpanEstimates(16_000, 60_000, 2, () => 0);
  estimates.set("c", "q1", estimate(1));
  estimates.set("c", "q2", estimate(2));
  estimates.get("q1");
  estimates.set("c", "q3", estimate(3));
  assert.equal(estimates.get("q2"), undefined);
  assert.deepEqual(estimates.get("q1"), estimate(1));
  assert.deepEqual(estimates.get("q3"), estimate(3));
});

test("a span is taken past 4,000 matches rarer than one chunk in four, at any collection size (its id range is read from the BRIN index)", () => {
  // A word outside the statistics' most common elements is estimated at 0.5 % of the chunks.
  assert.equal(windowSpan(500, 100_000), null, "few matches: all read from the GIN index");
  assert.equal(windowSpan(5_000, 100_000), 50_000);
  assert.equal(windowSpan(4_000, 1_000_000), null, "4,000 or fewer: all read from the GIN index");
  assert.equal(windowSpan(5_000, 1_000_000), 500_000, "half the collection: its block ranges cost less than reading the 2,500 others");
  assert.equal(windowSpan(20_000, 1_000_000), 125_000);
  assert.equal(windowSpan(400_000, 1_000_000), null, "a common word: the walk newest first");
});
