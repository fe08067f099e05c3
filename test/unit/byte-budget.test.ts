import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ByteBudget } from "../../server/ingest/byte-budget";

const settledSoon = async (p: Promise<unknown>): Promise<boolean> => {
  let done = false;
  void p.then(() => (done = true));
  await new Promise((resolve) => setImmediate(resolve));
  return done;
};

describe("ByteBudget", () => {
  it("grants what fits at once and makes the rest wait, first come first served", async () => {
    const budget = new ByteBudget(100);
    assert.equal(await budget.acquire(60), 60);
    const big = budget.acquire(50);
    const small = budget.acquire(10);
    assert.equal(await settledSoon(big), false, "50 more does not fit in 100 with 60 held");
    assert.equal(await settledSoon(small), false, "a later small request does not overtake a waiting one");
    budget.release(60);
    assert.equal(await big, 50);
    assert.equal(await small, 10);
    assert.equal(budget.inUse, 60);
  });

  it("lets a request larger than the budget run alone instead of never", async () => {
    const budget = new ByteBudget(100);
    assert.equal(await budget.acquire(10), 10);
    const huge = budget.acquire(5000);
    assert.equal(await settledSoon(huge), false);
    budget.release(10);
    assert.equal(await huge, 100, "holds the whole budget");
    const next = budget.acquire(1);
    assert.equal(await settledSoon(next), false);
    budget.release(100);
    assert.equal(await next, 1);
    budget.release(1);
    assert.equal(budget.inUse, 0);
  });
});
