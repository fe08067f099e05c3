import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { BoundedWorkQueue, PasswordHasher } from "../../server/accounts/password-hasher";
import { DUMMY_HASH } from "../../server/accounts/passwords";
import { ServiceUnavailableError } from "../../server/errors";

/** A runner whose jobs finish only when the test says so. */
function heldRunner() {
  const held: Array<() => void> = [];
  const started: string[] = [];
  const run = (job: string) =>
    new Promise<string>((resolve) => {
      started.push(job);
      held.push(() => resolve(`done ${job}`));
    });
  return { run, started, releaseNext: () => held.shift()!() };
}

describe("BoundedWorkQueue", () => {
  it("runs as many jobs as runners, queues up to the limit, and refuses the next with 503 and Retry-After", async () => {
    const runner = heldRunner();
    const queue = new BoundedWorkQueue([runner.run], 1);
    const first = queue.run("a");
    const second = queue.run("b");
    assert.deepEqual(runner.started, ["a"]);
    assert.equal(queue.queued, 1);
    await assert.rejects(queue.run("c"), (e: unknown) => e instanceof ServiceUnavailableError && e.status === 503 && (e.retryAfterSeconds ?? 0) >= 1);
    runner.releaseNext();
    assert.equal(await first, "done a");
    assert.deepEqual(runner.started, ["a", "b"], "the queued job starts when a runner frees up");
    assert.equal(queue.queued, 0);
    const third = queue.run("d");
    runner.releaseNext();
    assert.equal(await second, "done b");
    runner.releaseNext();
    assert.equal(await third, "done d");
  });

  it("a failed job frees its runner for the next one", async () => {
    let calls = 0;
    const queue = new BoundedWorkQueue([async (job: string) => (calls++ === 0 ? Promise.reject(new Error(`boom ${job}`)) : `ok ${job}`)], 4);
    await assert.rejects(queue.run("a"), /boom a/);
    assert.equal(await queue.run("b"), "ok b");
  });
});

describe("PasswordHasher", () => {
  it("hashes and checks on its threads (the pre-hashed bcrypt at cost 12), and the dummy hash matches nothing", async () => {
    const hasher = new PasswordHasher({ threads: 1, queueLimit: 4 });
    try {
      const hash = await hasher.hash("correct-horse-42");
      assert.match(hash, /^\$sluice-hmac-sha256\$2b\$12\$/);
      assert.deepEqual(await hasher.check("correct-horse-42", hash), { ok: true, outdated: false });
      assert.deepEqual(await hasher.check("wrong-horse-42", hash), { ok: false, outdated: false });
      assert.deepEqual(await hasher.check("correct-horse-42", DUMMY_HASH), { ok: false, outdated: false });
    } finally {
      await hasher.close();
    }
  });
});
