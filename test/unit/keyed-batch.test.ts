import { test } from "node:test";
import assert from "node:assert/strict";
import { KeyedBatch } from "../../server/search/keyed-batch";

test("lookups asked in one turn are loaded together, each key once; a later turn is a new batch", async () => {
  const loads: string[][] = [];
  const batch = new KeyedBatch(async (keys) => {
    loads.push(keys);
    return new Map(keys.map((k) => [k, k.toUpperCase()]));
  });
  const ready = Promise.resolve();
  // As a listing asks: each caller resumes from an await before asking.
  const answers = await Promise.all(
    ["a", "b", "a"].map(async (key) => {
      await ready;
      return batch.get(key);
    }),
  );
  assert.deepEqual(answers, ["A", "B", "A"]);
  assert.deepEqual(loads, [["a", "b"]]);
  assert.equal(await batch.get("c"), "C");
  assert.deepEqual(loads, [["a", "b"], ["c"]]);
});

test("a failed load, or one that leaves a key out, rejects every lookup of its batch and not the next batch's", async () => {
  let fail = true;
  const batch = new KeyedBatch<number>(async (keys) => {
    if (fail) throw new Error("connection lost");
    return new Map(keys.filter((k) => k !== "missing").map((k) => [k, k.length]));
  });
  const failed = await Promise.allSettled([batch.get("x"), batch.get("yy")]);
  assert.deepEqual(failed.map((r) => r.status), ["rejected", "rejected"]);
  fail = false;
  await assert.rejects(Promise.all([batch.get("x"), batch.get("missing")]), /no value for missing/);
  assert.equal(await batch.get("yy"), 2);
});
