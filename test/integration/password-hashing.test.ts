import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { GOOD_PASSWORD, uniqueEmail } from "../fixtures/http-client";
import { tempDir } from "../fixtures/sluice-server";
import { useSluice } from "../fixtures/use-sluice";

// One hashing thread, one place in its queue, and every job held on a FIFO until the test lets it go: the full queue is reached without timing.
const fifo = path.join(tempDir("sluice-hold-"), "hold");
execFileSync("mkfifo", [fifo]);
const sluice = useSluice({ env: { PASSWORD_HASH_THREADS: "1", PASSWORD_HASH_QUEUE: "1", SLUICE_TEST_HOLD_HASHING_FILE: fifo } });
const { request } = sluice;

/** Resolves once the hashing thread has opened the FIFO (a job is running), then lets that job go. */
async function releaseOne(): Promise<void> {
  const handle = await fs.promises.open(fifo, "w");
  await handle.write("go\n");
  await handle.close();
}

describe("password hashing on a bounded queue", () => {
  it("answers 503 with Retry-After when the queue is full; the held sign-ins finish once let go", async () => {
    const email = uniqueEmail();
    const signUp = request("POST", "/signup", { body: { email, password: GOOD_PASSWORD } });
    await releaseOne();
    assert.equal((await signUp).status, 201);

    // The first sign-in holds the thread; of the next two, one waits in the queue's one place and the other is refused.
    const running = request("POST", "/signin", { body: { email, password: GOOD_PASSWORD } });
    const handle = await fs.promises.open(fifo, "w");
    const next = [request("POST", "/signin", { body: { email, password: GOOD_PASSWORD } }), request("POST", "/signin", { body: { email, password: "wrong-password-1" } })];
    const refused = await Promise.race(next);
    assert.equal(refused.status, 503);
    assert.match(refused.body.detail, /Too many sign-ins at once; try again in \d+ seconds/);
    assert.match(refused.headers.get("retry-after") ?? "", /^\d+$/);
    await handle.write("go\n");
    await handle.close();
    assert.equal((await running).status, 200);
    await releaseOne();
    const answers = await Promise.all(next);
    const statuses = answers.map((a) => a.status);
    assert.equal(statuses.filter((s) => s === 503).length, 1, "exactly one was refused");
    assert.ok(statuses.some((s) => s === 200 || s === 401), "the queued one was checked once let go");
  });
});
