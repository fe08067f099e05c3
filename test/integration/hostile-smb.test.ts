// The API against a hostile SMB server (test/fixtures/hostile-smb.ts, issue 34): source checks and
// share listings fail, each within its deadline, with the documented answer, and the API keeps
// serving other requests meanwhile (the checks run on threads of their own). Latencies are
// reported here, not asserted: the bench (test/bench/hostile-smb.bench.ts) measures them alone.
import assert from "node:assert/strict";
import { before, describe, it, type TestContext } from "node:test";
import { createGroup, signUp, waitForJobEnd } from "../fixtures/http-client";
import { hostileSourceBody, useHostileSmb, type HostileTrap } from "../fixtures/hostile-smb";
import { waitFor } from "../fixtures/wait-for";
import { SMB_CHECKS_AT_ONCE } from "../../server/connectors/smb/smb-check-thread";

const CHECK_DEADLINE_S = 6;
const { hostile, sluice } = useHostileSmb({ checkDeadlineS: CHECK_DEADLINE_S, smbTimeoutMs: 1000 });
const { request } = sluice;

const smbBody = (name: string) => hostileSourceBody(hostile.port, name);

/** Runs `work` while GET /api/health is asked again and again; answers its result and every health answer's status and time. */
async function whileServing<T>(work: () => Promise<T>): Promise<{ result: T; elapsedMs: number; health: Array<{ status: number; ms: number }> }> {
  const health: Array<{ status: number; ms: number }> = [];
  let done = false;
  const asking = (async () => {
    while (!done) {
      const start = performance.now();
      const res = await request("GET", "/health");
      health.push({ status: res.status, ms: performance.now() - start });
    }
  })();
  const start = performance.now();
  try {
    const result = await work();
    return { result, elapsedMs: performance.now() - start, health };
  } finally {
    done = true;
    await asking;
  }
}

function p99(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)] ?? 0;
}

function report(t: TestContext, what: string, run: { elapsedMs: number; health: Array<{ ms: number }> }): void {
  const times = run.health.map((h) => h.ms);
  t.diagnostic(`${what}: answered in ${Math.round(run.elapsedMs)} ms; ${times.length} health requests meanwhile, p99 ${p99(times).toFixed(1)} ms, max ${Math.max(...times).toFixed(1)} ms`);
}

let owner: { token: string; group: string };
let sourceId: string;
let pipelineId: string;

describe("source checks against a hostile SMB server", () => {
  before(async () => {
    const { token } = await signUp(request, "hostile");
    owner = { token, group: await createGroup(request, token) };
    hostile.trap = "none";
    const made = await request("POST", `/data_sources/smb/${owner.group}`, { token, body: smbBody(`Hostile ${Date.now()}`) });
    assert.equal(made.status, 201, made.text);
    sourceId = made.body.data_source.id;
    pipelineId = made.body.pipeline.id;
  });

  for (const [trap, reason] of [
    ["silence", "timed_out"],
    ["pending", "timed_out"],
  ] as Array<[HostileTrap, string]>) {
    it(`creation against ${trap}: 400 Invalid SMB credentials, reason ${reason}, nothing created, the API serving meanwhile`, async (t) => {
      hostile.trap = trap;
      const before = (await request("GET", "/data_sources", { token: owner.token })).body.length;
      const run = await whileServing(() => request("POST", `/data_sources/smb/${owner.group}`, { token: owner.token, body: smbBody(`Trap ${trap} ${Date.now()}`) }));
      report(t, `creation, ${trap}`, run);
      assert.equal(run.result.status, 400, run.result.text);
      assert.equal(run.result.body.detail, "Invalid SMB credentials");
      assert.equal(run.result.body.reason, reason);
      assert.equal(typeof run.result.body.hint, "string");
      assert.equal((await request("GET", "/data_sources", { token: owner.token })).body.length, before);
      assert.ok(run.health.length > 0 && run.health.every((h) => h.status === 200), "health requests were answered meanwhile");
    });
  }

  for (const trap of ["zero-fragment", "endless-pipe", "absurd-sizes", "endless-listing", "one-entry-pages", "empty-pages", "absurd-name", "pending", "silence", "drip"] as HostileTrap[]) {
    it(`share listing against ${trap}: 503 SMB server unreachable, the API serving meanwhile`, async (t) => {
      hostile.trap = trap;
      const run = await whileServing(() => request("GET", `/data_sources/smb/list/${sourceId}`, { token: owner.token }));
      report(t, `listing, ${trap}`, run);
      assert.equal(run.result.status, 503, run.result.text);
      assert.deepEqual(run.result.body, { detail: "SMB server unreachable" });
      assert.ok(run.health.length > 0 && run.health.every((h) => h.status === 200), "health requests were answered meanwhile");
    });
  }

  it(`at most ${SMB_CHECKS_AT_ONCE} checks at once: one more answers 503 with Retry-After while they hold their threads`, async () => {
    hostile.trap = "drip";
    const list = () => request("GET", `/data_sources/smb/list/${sourceId}`, { token: owner.token });
    const connectionsBefore = hostile.connections;
    const holding = Array.from({ length: SMB_CHECKS_AT_ONCE }, list);
    // The drip holds every listing to the check deadline; asked meanwhile, one more finds no thread.
    await waitFor(() => hostile.connections >= connectionsBefore + SMB_CHECKS_AT_ONCE, "every check's connection to the server");
    const extra = await list();
    assert.equal(extra.status, 503, extra.text);
    assert.match(extra.body.detail, new RegExp(`^${SMB_CHECKS_AT_ONCE} SMB checks are under way already; try again in a few seconds$`));
    assert.equal(extra.headers.get("retry-after"), "5");
    for (const res of await Promise.all(holding)) assert.deepEqual(res.body, { detail: "SMB server unreachable" });
  });

  for (const [trap, message] of [
    ["endless-listing", /more than 100000 entries/],
    ["pending", /kept saying STATUS_PENDING/],
  ] as Array<[HostileTrap, RegExp]>) {
    it(`an ingestion against ${trap} fails with the bound it met`, async () => {
      hostile.trap = trap;
      const started = await request("POST", `/data_pipelines/${pipelineId}/ingest`, { token: owner.token });
      assert.equal(started.status, 202, started.text);
      const job = await waitForJobEnd(request, owner.token, pipelineId);
      assert.equal(job.status, "failed", JSON.stringify(job));
      assert.match(job.error_message, message);
    });
  }

  it("behaving again, the same source lists its share (nothing stuck from the traps)", async () => {
    hostile.trap = "none";
    const res = await request("GET", `/data_sources/smb/list/${sourceId}`, { token: owner.token });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, { shares: { docs: ["report.txt"] } });
  });
});
