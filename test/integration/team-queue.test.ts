import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { SAMBA_TIMEOUT_MS, startSamba, type SambaServer } from "../fixtures/samba";
import { startSluice, tempDir, type SluiceServer } from "../fixtures/sluice-server";
import { onPostgres } from "../fixtures/postgres";
import { startWorker as startSluiceWorker, type SluiceWorker } from "../fixtures/sluice-worker";
import { addSmbSource, client, createGroup, GOOD_PASSWORD, signUp, waitForJobEnd, type Request } from "../fixtures/http-client";
import { Redis } from "ioredis";
import { redisMissingReason, startRedis, startSentinel, type RedisServer } from "../fixtures/redis";
import { startFakeOllama, type FakeOllama } from "../fixtures/fake-ollama";
import { postSse, type SseResult } from "../fixtures/sse-client";
import { startRoundRobinProxy, type RoundRobinProxy } from "../fixtures/round-robin-proxy";
import { WAIT_LIMIT_MS, waitFor } from "../fixtures/wait-for";

/** A team job over the bulk share: slower than most waits on a busy machine. */
const QUEUE_WAIT = { timeoutMs: 90_000 };

// Team server mode: REDIS_URL puts the ingestion queue on BullMQ; several processes share it.
const skip = redisMissingReason() ?? false;

let samba: SambaServer;
let redis: RedisServer;
let dataDir: string;
let api: SluiceServer;
let request: Request;
let owner: { email: string; token: string };
let group: string;
let teamEnv: Record<string, string>;

function writeBulk(dir: string, count: number): void {
  for (let i = 0; i < count; i++) {
    const folder = path.join(dir, `batch-${Math.floor(i / 200)}`);
    fs.mkdirSync(folder, { recursive: true });
    fs.writeFileSync(path.join(folder, `note-${i}.txt`), `Team note number ${i}. `.repeat(40));
  }
}

/** A worker on the API processes' storage: their DATA_DIR and, on the PostgreSQL run, their database. */
function startWorker(env: Record<string, string>): SluiceWorker {
  return startSluiceWorker({ DATA_DIR: dataDir, ...(api?.databaseUrl ? { DATABASE_URL: api.databaseUrl } : {}), ...env });
}

function addSource(name: string) {
  return addSmbSource(request, owner.token, group, samba, name);
}

async function status(pipelineId: string, via: Request = request) {
  const res = await via("GET", `/data_pipelines/${pipelineId}/ingest/status`, { token: owner.token });
  assert.equal(res.status, 200, res.text);
  return res.body;
}

// "The job is running" below is its discovery count: written the moment the walk ends, while
// indexing the bulk share's 1,500 files takes far longer than one poll. (Waiting for processed
// files instead raced a fast run to its end.)
const done = (pipelineId: string, via: Request = request) =>
  waitFor(async () => {
    const s = await status(pipelineId, via);
    return s.status !== "processing" && s;
  }, `job of ${pipelineId} to end`, QUEUE_WAIT);

/**
 * A long job running on a fresh collection (re-runs of an indexed share are quick) with another
 * pipeline's job queued behind it. It returns as soon as the job runs: on its own thread the job
 * does not wait for the API's turns, and a wait for its first counters could see it near its end.
 */
async function longRunWithOneQueued(name: string, queuedPipelineId: string) {
  const longRun = await addSource(name);
  await request("POST", `/data_pipelines/${longRun.pipeline.id}/ingest`, { token: owner.token });
  const queued = await request("POST", `/data_pipelines/${queuedPipelineId}/ingest`, { token: owner.token });
  assert.equal(queued.status, 202);
  await waitFor(async () => {
    const now = await status(longRun.pipeline.id);
    return now.status === "processing" && now.queued === false;
  }, "the long job to run", QUEUE_WAIT);
  return { longRun, queued };
}

describe("team server mode: the ingestion queue on Redis (BullMQ)", { skip }, () => {
  let bulk: Awaited<ReturnType<typeof addSource>>;
  let docs: Awaited<ReturnType<typeof addSource>>;

  before(async () => {
    const bulkDir = tempDir("sluice-team-bulk-");
    writeBulk(bulkDir, 1500);
    fs.chmodSync(bulkDir, 0o755);
    samba = await startSamba({ extraShares: { bulk: bulkDir } });
    redis = await startRedis();
    dataDir = tempDir();
    teamEnv = { REDIS_URL: redis.url, REDIS_PREFIX: "team-test", SMB_TIMEOUT_MS: String(SAMBA_TIMEOUT_MS) };
    api = await startSluice({ dataDir, env: teamEnv });
    request = client(api.api);
    owner = await signUp(request, "team");
    group = await createGroup(request, owner.token);
    bulk = await addSource("Team bulk");
    docs = await addSource("Team docs");
  });
  after(async () => {
    if (api && api.child.exitCode === null) await api.stop();
    await samba?.stop();
    await redis?.stop();
  });

  it("answers 202 then 409 while queued or running, and runs one job at a time across pipelines in trigger order", async () => {
    const first = await request("POST", `/data_pipelines/${bulk.pipeline.id}/ingest`, { token: owner.token });
    assert.equal(first.status, 202, first.text);
    assert.equal(first.body.status, "processing");
    const second = await request("POST", `/data_pipelines/${docs.pipeline.id}/ingest`, { token: owner.token });
    assert.equal(second.status, 202);
    assert.equal((await request("POST", `/data_pipelines/${bulk.pipeline.id}/ingest`, { token: owner.token })).status, 409);
    assert.equal((await request("POST", `/data_pipelines/${docs.pipeline.id}/ingest`, { token: owner.token })).status, 409);
    await waitFor(async () => (await status(bulk.pipeline.id)).entities_discovered > 0, "the first job to run", QUEUE_WAIT);
    const waiting = await status(docs.pipeline.id);
    assert.equal(waiting.status, "processing");
    assert.equal(waiting.queued, true, "the second job waits while the first runs");
    const a = await done(bulk.pipeline.id);
    const b = await done(docs.pipeline.id);
    assert.equal(a.status, "completed", JSON.stringify(a));
    assert.equal(b.status, "completed", JSON.stringify(b));
    assert.ok(new Date(b.started_at) >= new Date(a.completed_at), "the second started after the first ended");
    assert.equal(a.entities_discovered, a.entities_processed);
  });

  it("a job queued when the API stops runs after its restart; the running one is recorded interrupted", async () => {
    const { longRun, queued } = await longRunWithOneQueued("Team bulk again", docs.pipeline.id);
    assert.equal(await api.stop(), 0);

    api = await startSluice({ dataDir, env: teamEnv });
    request = client(api.api);
    const interrupted = await status(longRun.pipeline.id);
    assert.equal(interrupted.status, "failed");
    assert.equal(interrupted.error_message, "Interrupted by shutdown");
    const after = await done(docs.pipeline.id);
    assert.equal(after.job_id, queued.body.job_id);
    assert.equal(after.status, "completed", JSON.stringify(after));
  });

  it("an API process killed mid-run (SIGKILL): at its restart the job is failed as on the desktop, queued ones run, and the next run completes", async () => {
    // The desktop's counterpart: ingestion.test.ts, "a job killed mid-run (SIGKILL)".
    const { longRun, queued } = await longRunWithOneQueued("Team bulk crash restart", docs.pipeline.id);
    await api.kill();

    api = await startSluice({ dataDir, env: teamEnv });
    request = client(api.api);
    // Read as soon as the restarted process listens: no wait for BullMQ's lock to expire.
    const interrupted = await status(longRun.pipeline.id);
    assert.equal(interrupted.status, "failed", JSON.stringify(interrupted));
    assert.equal(interrupted.error_message, "Interrupted by shutdown");
    assert.match(interrupted.completed_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}$/);
    const pipeline = await request("GET", `/data_pipelines/${longRun.pipeline.id}`, { token: owner.token });
    assert.equal(pipeline.body.status, "failed");

    const after = await done(docs.pipeline.id);
    assert.equal(after.job_id, queued.body.job_id);
    assert.equal(after.status, "completed", JSON.stringify(after));
    const again = await request("POST", `/data_pipelines/${longRun.pipeline.id}/ingest`, { token: owner.token });
    assert.equal(again.status, 202, again.text);
    const rerun = await done(longRun.pipeline.id);
    assert.equal(rerun.status, "completed", JSON.stringify(rerun));
    assert.equal(rerun.entities_processed, rerun.entities_discovered);
  });

  it("two API processes share one DATA_DIR and queue; `npm run worker` takes the job; progress shows in both; sessions work in both", async () => {
    await api.stop();
    const apiOnly = { ...teamEnv, SLUICE_WORKER: "0" };
    api = await startSluice({ dataDir, env: apiOnly });
    request = client(api.api);
    const other = await startSluice({ dataDir, env: apiOnly });
    const otherRequest = client(other.api);
    let worker: SluiceWorker | null = null;
    try {
      // A session from one process is good on the other (one signing secret).
      assert.equal((await otherRequest("GET", "/users/me", { token: owner.token })).status, 200);
      const fresh = await addSource("Team bulk third");
      const trigger = await request("POST", `/data_pipelines/${fresh.pipeline.id}/ingest`, { token: owner.token });
      assert.equal(trigger.status, 202);
      assert.equal((await otherRequest("POST", `/data_pipelines/${fresh.pipeline.id}/ingest`, { token: owner.token })).status, 409);
      await new Promise((r) => setTimeout(r, 1000));
      const idle = await status(fresh.pipeline.id, otherRequest);
      assert.equal(idle.queued, true, "no process takes jobs yet");

      worker = startWorker(teamEnv);
      await waitFor(async () => worker!.output().includes("worker ready") || undefined, "the worker to start");
      // The worker's job, running, as the other API process sees it (its counters are checked at the end: on its
      // own thread the job may finish within one progress write).
      const seen = await waitFor(async () => {
        const s = await status(fresh.pipeline.id, otherRequest);
        return (s.status !== "processing" || s.queued === false) && s;
      }, "progress visible from the other API process", QUEUE_WAIT);
      assert.equal(seen.queued, false);
      const end = await done(fresh.pipeline.id, otherRequest);
      assert.equal(end.status, "completed", JSON.stringify(end));
      assert.equal(end.entities_processed, end.entities_discovered);
      const hits = await request("GET", `/collections/${fresh.pipeline.collection_id}/search?q=${encodeURIComponent("Team note number 1499")}`, {
        token: owner.token,
      });
      assert.equal(hits.status, 200);
      assert.ok(hits.body.results.length > 0, "the worker's index is the API's index");
      assert.equal(await worker.stop(), 0, worker.output());
    } finally {
      await worker?.stop();
      await other.stop();
    }
  });

  it("a worker killed mid-run: another process records the job interrupted within seconds, and the queue goes on", async () => {
    // api is API-only here (SLUICE_WORKER=0): only workers take jobs.
    const first = startWorker(teamEnv);
    let second: SluiceWorker | null = null;
    try {
      await waitFor(async () => first.output().includes("worker ready") || undefined, "the worker to start");
      const crash = await addSource("Team bulk crash");
      await request("POST", `/data_pipelines/${crash.pipeline.id}/ingest`, { token: owner.token });
      // Killed as soon as the job runs: on its own thread it may otherwise end before a wait for its first counters does.
      await waitFor(async () => {
        const now = await status(crash.pipeline.id);
        return now.status === "processing" && now.queued === false;
      }, "the job to run", QUEUE_WAIT);
      first.child.kill("SIGKILL");
      await first.exited;
      const failed = await done(crash.pipeline.id);
      assert.equal(failed.status, "failed");
      assert.equal(failed.error_message, "Interrupted by shutdown");

      const next = await request("POST", `/data_pipelines/${docs.pipeline.id}/ingest`, { token: owner.token });
      assert.equal(next.status, 202);
      second = startWorker(teamEnv);
      const end = await done(docs.pipeline.id);
      assert.equal(end.status, "completed", JSON.stringify(end));
      const crashed = await status(crash.pipeline.id);
      assert.equal(crashed.error_message, "Interrupted by shutdown", "the crashed job is never run again");
    } finally {
      await first.stop();
      await second?.stop();
    }
  });

  // On PostgreSQL a worker frozen inside a transaction holds the writer lock every transaction
  // takes: only PostgreSQL's idle-in-transaction limit (data-source.ts) lets the sweep record the
  // job and the API write again, so this case runs on both back ends (decision 0236).
  it("a worker frozen mid-run (SIGSTOP: its connection stays open, as a machine that lost power leaves it) is recorded interrupted once its lock lapses", async () => {
    // api is API-only here (SLUICE_WORKER=0): it sweeps but takes no jobs.
    const frozen = startWorker(teamEnv);
    try {
      await waitFor(async () => frozen.output().includes("worker ready") || undefined, "the worker to start");
      const stuck = await addSource("Team bulk frozen");
      await request("POST", `/data_pipelines/${stuck.pipeline.id}/ingest`, { token: owner.token });
      await waitFor(async () => {
        const now = await status(stuck.pipeline.id);
        return now.status === "processing" && now.queued === false;
      }, "the job to run");
      frozen.child.kill("SIGSTOP");
      // Redis still lists the frozen worker's connection; its silence past BullMQ's lock (15 s) is what tells.
      const failed = await done(stuck.pipeline.id);
      assert.equal(failed.status, "failed", JSON.stringify(failed));
      assert.equal(failed.error_message, "Interrupted by shutdown");
      // Woken up, the worker goes on with the job it thinks it holds; once it has exited, every
      // write it could make is made, and the record the sweep wrote must still stand.
      frozen.child.kill("SIGCONT");
      await frozen.stop();
      const after = await status(stuck.pipeline.id);
      assert.deepEqual(
        { status: after.status, error_message: after.error_message, completed_at: after.completed_at },
        { status: "failed", error_message: "Interrupted by shutdown", completed_at: failed.completed_at },
        "a job already recorded as ended keeps its record",
      );
    } finally {
      frozen.child.kill("SIGKILL");
      await frozen.exited;
    }
  });

  it("a queued job still runs when Redis has lost its data: the database rows are the source of truth", async () => {
    await api.stop();
    api = await startSluice({ dataDir, env: { ...teamEnv, SLUICE_WORKER: "0" } });
    request = client(api.api);
    const queued = await request("POST", `/data_pipelines/${docs.pipeline.id}/ingest`, { token: owner.token });
    assert.equal(queued.status, 202, queued.text);
    await api.stop();
    const emptyRedis = await startRedis();
    try {
      api = await startSluice({ dataDir, env: { ...teamEnv, REDIS_URL: emptyRedis.url } });
      request = client(api.api);
      const end = await done(docs.pipeline.id);
      assert.equal(end.job_id, queued.body.job_id);
      assert.equal(end.status, "completed", JSON.stringify(end));
    } finally {
      await api.stop();
      await emptyRedis.stop();
    }
  });

  it("`npm run worker` without REDIS_URL says what is missing", async () => {
    const worker = startWorker({ REDIS_URL: "" });
    assert.equal(await worker.exited, 1);
    assert.match(worker.output(), /REDIS_URL must be set/);
  });
});

describe("team server mode: one model pull shared by two API processes", { skip }, () => {
  let fake: FakeOllama;
  let redisForPulls: RedisServer;
  let first: SluiceServer;
  let second: SluiceServer;

  before(async () => {
    fake = await startFakeOllama();
    redisForPulls = await startRedis();
    const env = { REDIS_URL: redisForPulls.url, REDIS_PREFIX: "pull-test", OLLAMA_HOST: fake.url, SLUICE_SSE_KEEPALIVE_MS: "50" };
    const shared = tempDir();
    first = await startSluice({ dataDir: shared, env });
    second = await startSluice({ dataDir: shared, env });
  });
  after(async () => {
    await first?.stop();
    await second?.stop();
    await fake?.close();
    await redisForPulls?.stop();
  });

  it("a pull started on one process is joined from the other: one upstream pull, both clients get completed", async () => {
    const token = (await signUp(client(first.api), "puller")).token;
    fake.lineDelayMs = 60;
    let started!: () => void;
    const firstEvent = new Promise<void>((resolve) => (started = resolve));
    const one = postSse(`${first.api}/models`, token, { model_name: "tinyllama" }, { onEvent: () => started() });
    await firstEvent;
    const two = await postSse(`${second.api}/models`, token, { model_name: "tinyllama" });
    const oneResult = await one;
    const last = (r: SseResult) => r.events[r.events.length - 1];
    assert.equal(last(oneResult).status, "completed", oneResult.raw);
    assert.equal(last(two).status, "completed", two.raw);
    assert.equal(last(two).model.model_name, "tinyllama:latest");
    assert.ok(two.events.some((e) => String(e.status).startsWith("pulling ")), "the joiner sees layer progress");
    assert.equal(fake.pullCount("tinyllama"), 1, "one upstream pull");
  });

  it("a cancel sent to the other process ends only the canceller's stream; the download goes on for the user still waiting", async () => {
    const a = (await signUp(client(first.api), "cancels")).token;
    const b = (await signUp(client(second.api), "waits")).token;
    fake.lineDelayMs = 40;
    let joined!: () => void;
    const started = new Promise<void>((resolve) => (joined = resolve));
    const waiting = postSse(`${second.api}/models`, b, { model_name: "qwen2.5-coder:7b" }, { onEvent: (e) => e.completed > 0 && joined() });
    await started;
    let cancelled: Promise<{ status: number; body: any }> | undefined;
    // A's stream lives on the first process; the cancel lands on the second, as a round-robin balancer may send it.
    const leaving = postSse(`${first.api}/models`, a, { model_name: "qwen2.5-coder:7b" }, {
      onEvent: () => {
        cancelled ??= client(second.api)("POST", "/models/cancel", { token: a, body: { model_name: "qwen2.5-coder:7b" } });
      },
    });
    const [left, stayed] = await Promise.all([leaving, waiting]);
    const last = (r: SseResult) => r.events[r.events.length - 1];
    assert.deepEqual((await cancelled!).body, { model_name: "qwen2.5-coder:7b", download_stopped: false });
    assert.equal(last(left).status, "cancelled", left.raw);
    assert.equal(last(stayed).status, "completed", stayed.raw);
    assert.equal(fake.pullCount("qwen2.5-coder:7b"), 1, "one upstream pull");
    assert.equal(fake.abortedPulls("qwen2.5-coder:7b"), 0, "the download was not stopped");
  });

  it("a cancel by the only one waiting, sent to the other process, stops the download where it runs", async () => {
    const a = (await signUp(client(first.api), "alone")).token;
    fake.lineDelayMs = 40;
    let cancelled: Promise<{ status: number; body: any }> | undefined;
    const res = await postSse(`${first.api}/models`, a, { model_name: "smollm2:135m" }, {
      onEvent: (e) => {
        if (e.completed > 0) cancelled ??= client(second.api)("POST", "/models/cancel", { token: a, body: { model_name: "smollm2:135m" } });
      },
    });
    assert.deepEqual((await cancelled!).body, { model_name: "smollm2:135m", download_stopped: true });
    assert.equal(res.events[res.events.length - 1].status, "cancelled", res.raw);
    await waitFor(() => fake.abortedPulls("smollm2:135m") > 0, "the fake Ollama to see the upstream download stopped");
    assert.equal(fake.abortedPulls("smollm2:135m"), 1, "the upstream download was stopped");
    const models = await client(second.api)("GET", "/models", { token: a });
    assert.ok(!models.body.some((m: { model_name: string }) => m.model_name === "smollm2:135m"));
    // Nothing is left to cancel on either process.
    assert.equal((await client(first.api)("POST", "/models/cancel", { token: a, body: { model_name: "smollm2:135m" } })).status, 404);
  });
});

describe("team server mode: several API processes behind one port", { skip }, () => {
  let docsSamba: SambaServer;
  let redisForPort: RedisServer;
  let processes: SluiceServer[] = [];
  let proxy: RoundRobinProxy;

  before(async () => {
    docsSamba = await startSamba();
    redisForPort = await startRedis();
    const shared = tempDir();
    const env = { REDIS_URL: redisForPort.url, REDIS_PREFIX: "one-port-test", SMB_TIMEOUT_MS: String(SAMBA_TIMEOUT_MS) };
    processes = [await startSluice({ dataDir: shared, env }), await startSluice({ dataDir: shared, env })];
    proxy = await startRoundRobinProxy(processes.map((p) => p.url));
  });
  after(async () => {
    await proxy?.close();
    for (const p of processes) await p.stop();
    await docsSamba?.stop();
    await redisForPort?.stop();
  });

  it("every request may land on either process: sessions, the 409 rule, job progress and search all hold", async () => {
    const viaPort = client(`${proxy.url}/api`);
    const user = await signUp(viaPort, "one-port");
    const groupId = await createGroup(viaPort, user.token);
    const source = await addSmbSource(viaPort, user.token, groupId, docsSamba, "Behind one port");
    const trigger = await viaPort("POST", `/data_pipelines/${source.pipeline.id}/ingest`, { token: user.token });
    assert.equal(trigger.status, 202, trigger.text);
    const again = await viaPort("POST", `/data_pipelines/${source.pipeline.id}/ingest`, { token: user.token });
    assert.equal(again.status, 409, "the next request went to the other process, which sees the job too");
    const job = await waitForJobEnd(viaPort, user.token, source.pipeline.id);
    assert.equal(job.status, "completed", JSON.stringify(job));
    for (let i = 0; i < 2; i++) {
      const me = await viaPort("GET", "/users/me", { token: user.token });
      assert.equal(me.status, 200, "a session issued by one process is good on both");
      const hits = await viaPort("GET", `/collections/${source.pipeline.collection_id}/search?q=${encodeURIComponent("notes")}`, { token: user.token });
      assert.equal(hits.status, 200, hits.text);
      assert.ok(hits.body.results.some((hit: { path: string }) => hit.path.endsWith("notes.md")), "both processes search the one index");
    }
    const counts = [...proxy.served.values()];
    assert.ok(counts.every((n) => n >= 5), `both processes answered requests: ${JSON.stringify(Object.fromEntries(proxy.served))}`);
  });
});

describe("team server mode over TLS: REDIS_URL=rediss://", { skip }, () => {
  let tlsRedis: RedisServer;
  let docsSamba: SambaServer;
  let server: SluiceServer;

  before(async () => {
    tlsRedis = await startRedis({ tls: true });
    docsSamba = await startSamba();
  });
  after(async () => {
    await server?.stop();
    await docsSamba?.stop();
    await tlsRedis?.stop();
  });

  it("queues and runs an ingestion job through a Redis that speaks only TLS, checking its certificate", async () => {
    assert.match(tlsRedis.url, /^rediss:\/\//);
    // The test CA is trusted the way an administrator would add a private CA to Node.
    server = await startSluice({ env: { REDIS_URL: tlsRedis.url, REDIS_PREFIX: "tls-test", NODE_EXTRA_CA_CERTS: tlsRedis.caFile!, SMB_TIMEOUT_MS: String(SAMBA_TIMEOUT_MS) } });
    const viaTls = client(server.api);
    const user = await signUp(viaTls, "tls");
    const groupId = await createGroup(viaTls, user.token);
    const source = await addSmbSource(viaTls, user.token, groupId, docsSamba, "Over TLS");
    assert.equal((await viaTls("POST", `/data_pipelines/${source.pipeline.id}/ingest`, { token: user.token })).status, 202);
    const job = await waitForJobEnd(viaTls, user.token, source.pipeline.id);
    assert.equal(job.status, "completed", JSON.stringify(job));
    assert.doesNotMatch(server.output(), /DEP0123|certificate/i, "no TLS warnings or errors in the log");
  });
});

describe("team server mode through Redis Sentinel: REDIS_SENTINELS", { skip }, () => {
  let master: RedisServer;
  let sentinel: Awaited<ReturnType<typeof startSentinel>>;
  let docsSamba: SambaServer;
  let server: SluiceServer;

  before(async () => {
    master = await startRedis();
    sentinel = await startSentinel(master, "sluice-master");
    docsSamba = await startSamba();
  });
  after(async () => {
    await server?.stop();
    await docsSamba?.stop();
    await sentinel?.stop();
    await master?.stop();
  });

  it("asks the Sentinel for the master and runs an ingestion job through it", async () => {
    server = await startSluice({
      env: { REDIS_URL: "redis://sluice-master", REDIS_SENTINELS: sentinel.address, REDIS_PREFIX: "sentinel-test", SMB_TIMEOUT_MS: String(SAMBA_TIMEOUT_MS) },
    });
    const viaSentinel = client(server.api);
    const user = await signUp(viaSentinel, "sentinel");
    const groupId = await createGroup(viaSentinel, user.token);
    const source = await addSmbSource(viaSentinel, user.token, groupId, docsSamba, "Through Sentinel");
    assert.equal((await viaSentinel("POST", `/data_pipelines/${source.pipeline.id}/ingest`, { token: user.token })).status, 202);
    const job = await waitForJobEnd(viaSentinel, user.token, source.pipeline.id);
    assert.equal(job.status, "completed", JSON.stringify(job));
    const direct = new Redis(master.url);
    try {
      assert.ok((await direct.keys("sentinel-test:ingest:*")).length > 0, "the queue lives on the master the Sentinel named");
    } finally {
      direct.disconnect();
    }
  });
});

describe("team server mode: connections per process, and Redis going away", { skip }, () => {
  let own: RedisServer;
  let docsSamba: SambaServer;
  let server: SluiceServer;
  let probe: Redis;

  /** Every connection to this Redis but the probe's own, by name (the BullMQ worker's blocking one is named after the queue). */
  async function connections(): Promise<string[]> {
    const list = String(await probe.client("LIST"));
    return list
      .split("\n")
      .filter((line) => line && !/ name=probe /.test(line))
      .map((line) => /(?:^| )name=(\S*)/.exec(line)?.[1] ?? "");
  }

  /** Waits until the count is reached, then checks it stays there (no connection opened late). */
  async function settlesAt(count: number, what: string): Promise<string[]> {
    await waitFor(async () => (await connections()).length >= count || undefined, `${count} connections (${what})`);
    await new Promise((r) => setTimeout(r, 1500));
    const names = await connections();
    assert.equal(names.length, count, `${what}: ${JSON.stringify(names)}`);
    return names;
  }

  before(async () => {
    own = await startRedis();
    docsSamba = await startSamba();
    probe = new Redis({ port: own.port, host: "127.0.0.1", connectionName: "probe" });
  });
  after(async () => {
    probe?.disconnect();
    await server?.stop();
    await docsSamba?.stop();
    await own?.stop();
  });

  it("an API process holds two connections (shared + the worker's blocking one); a worker process two more; sign-ins open none", async () => {
    server = await startSluice({ env: { REDIS_URL: own.url, REDIS_PREFIX: "count-test", SMB_TIMEOUT_MS: String(SAMBA_TIMEOUT_MS) } });
    const names = await settlesAt(2, "one API process taking jobs");
    assert.ok(names.some((n) => /^sluice-[0-9a-f-]{36}$/.test(n)), JSON.stringify(names));
    const request = client(server.api);
    const { email } = await signUp(request, "count");
    assert.equal((await request("POST", "/signin", { body: { email, password: "wrong-password-1" } })).status, 401);
    assert.equal((await request("POST", "/signin", { body: { email, password: GOOD_PASSWORD } })).status, 200);
    await settlesAt(2, "after sign-ins, counted in Redis");
    const worker = startWorker({ DATA_DIR: server.dataDir, ...(server.databaseUrl ? { DATABASE_URL: server.databaseUrl } : {}), REDIS_URL: own.url, REDIS_PREFIX: "count-test" });
    try {
      await settlesAt(4, "plus one worker process");
    } finally {
      assert.equal(await worker.stop(), 0, worker.output());
    }
    await settlesAt(2, "the worker gone");
  });

  it("Redis unreachable: a trigger answers 503 and a sign-in fails within seconds instead of hanging; both work again once Redis is back", async () => {
    const request = client(server.api);
    const user = await signUp(request, "outage");
    const groupId = await createGroup(request, user.token);
    const source = await addSmbSource(request, user.token, groupId, docsSamba, "Outage");
    probe.disconnect();
    await own.stop();

    let started = Date.now();
    const trigger = await request("POST", `/data_pipelines/${source.pipeline.id}/ingest`, { token: user.token });
    const triggerMs = Date.now() - started;
    assert.equal(trigger.status, 503, trigger.text);
    assert.match(trigger.body.detail, /^The job queue \(Redis\) could not be reached/);
    // Without a command timeout the answer would never come (ioredis queues the command until
    // Redis is back): any bound tells the two apart, and one a loaded machine cannot stretch the
    // product's 5 s timeouts past (two busy loops made it 13.4 s once) keeps this from failing there.
    assert.ok(triggerMs < WAIT_LIMIT_MS, `answered after ${triggerMs} ms`);
    started = Date.now();
    const signIn = await request("POST", "/signin", { body: { email: user.email, password: GOOD_PASSWORD } });
    assert.equal(signIn.status, 500, signIn.text);
    assert.ok(Date.now() - started < WAIT_LIMIT_MS, `sign-in answered after ${Date.now() - started} ms`);
    const failed = await request("GET", `/data_pipelines/${source.pipeline.id}/ingest/status`, { token: user.token });
    assert.equal(failed.body.status, "failed", failed.text);

    own = await startRedis({ port: own.port });
    await waitFor(async () => (await request("POST", "/signin", { body: { email: user.email, password: GOOD_PASSWORD } })).status === 200 || undefined, "sign-in to work again");
    assert.equal((await request("POST", `/data_pipelines/${source.pipeline.id}/ingest`, { token: user.token })).status, 202);
    const job = await waitForJobEnd(request, user.token, source.pipeline.id);
    assert.equal(job.status, "completed", JSON.stringify(job));
    const refused = server.output().match(/.*ECONNREFUSED.*/g) ?? [];
    assert.equal(refused.length, 1, `the outage is logged once, not once per reconnect attempt and listener:\n${refused.join("\n")}`);
  });
});

// Team run only (PostgreSQL + Redis, as a team server runs): on the SQLite pass the API's trigger
// transactions meet two worker processes' writes on one SQLite file, which is not what this tests.
const onTeamRun = skip || (onPostgres() ? false : "runs in the team run (PostgreSQL + Redis)");

describe("team server mode: INGEST_CONCURRENCY with two `npm run worker` processes", { skip: onTeamRun }, () => {
  const FILES = 500;
  let redis: RedisServer;
  let api: SluiceServer;
  let request: Request;
  let token: string;
  let group: string;
  let workers: SluiceWorker[] = [];
  const root = fs.realpathSync(tempDir("sluice-team-concurrency-"));
  const dataDir = tempDir();
  const env = () => ({ REDIS_URL: redis.url, REDIS_PREFIX: "team-concurrency", FOLDER_SOURCE_ROOTS: root });

  before(async () => {
    for (const name of ["one", "two", "three", "four", "five", "six"]) {
      fs.mkdirSync(path.join(root, name));
      for (let i = 0; i < FILES; i++) fs.writeFileSync(path.join(root, name, `note-${i}.txt`), `Folder ${name} note ${i}. `.repeat(60));
    }
    redis = await startRedis();
    // Only the workers take jobs, so every job runs in a process whose INGEST_CONCURRENCY the test sets.
    api = await startSluice({ dataDir, env: { ...env(), SLUICE_WORKER: "0" } });
    request = client(api.api);
    ({ token } = await signUp(request, "concurrency"));
    group = await createGroup(request, token, "concurrency");
  });
  after(async () => {
    for (const worker of workers) await worker.stop();
    if (api && api.child.exitCode === null) await api.stop();
    await redis?.stop();
    fs.rmSync(root, { recursive: true, force: true });
  });

  async function startWorkers(extra: Record<string, string>): Promise<void> {
    for (const worker of workers) assert.equal(await worker.stop(), 0, worker.output());
    workers = [0, 1].map(() => startSluiceWorker({ DATA_DIR: dataDir, ...(api.databaseUrl ? { DATABASE_URL: api.databaseUrl } : {}), ...env(), ...extra }));
    for (const worker of workers) await waitFor(async () => worker.output().includes("worker ready") || undefined, "a worker to start");
  }

  async function folderPipeline(folder: string): Promise<{ id: string; collection: string; source: string }> {
    const body = { data_source: { data_source_name: `Folder ${folder}` }, folder_source: { path: path.join(root, folder) } };
    const created = await request("POST", `/data_sources/folder/${group}`, { token, body });
    assert.equal(created.status, 201, created.text);
    return { id: created.body.pipeline.id, collection: created.body.pipeline.collection_id, source: created.body.data_source.id };
  }

  const jobStatus = async (pipelineId: string) => {
    const res = await request("GET", `/data_pipelines/${pipelineId}/ingest/status`, { token });
    assert.equal(res.status, 200, res.text);
    return res.body;
  };
  const running = (s: { status: string; queued: boolean }) => s.status === "processing" && !s.queued;

  /** A trigger that must be accepted; a 500 shows what the API process logged. */
  async function trigger(pipelineId: string): Promise<void> {
    const res = await request("POST", `/data_pipelines/${pipelineId}/ingest`, { token });
    assert.equal(res.status, 202, `${res.text}\n${api.output().split("\n").filter((l) => l.includes('"level":"error"')).join("\n")}`);
  }

  /** Triggers both, polls both until they end; answers their final records and how many polls saw both running at once. */
  async function runBoth(a: string, b: string) {
    for (const id of [a, b]) await trigger(id);
    let together = 0;
    for (const deadline = Date.now() + 120_000; Date.now() < deadline; ) {
      const [sa, sb] = await Promise.all([jobStatus(a), jobStatus(b)]);
      if (running(sa) && running(sb)) together++;
      if (sa.status !== "processing" && sb.status !== "processing") {
        for (const s of [sa, sb]) {
          assert.equal(s.status, "completed", JSON.stringify(s));
          assert.equal(s.entities_processed, FILES);
        }
        return { a: sa, b: sb, together };
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error("timed out waiting for both jobs to end");
  }

  /** Whether the two jobs' runs (started_at to completed_at, as each worker recorded them) overlap in time. */
  const overlap = (a: { started_at: string; completed_at: string }, b: { started_at: string; completed_at: string }) =>
    new Date(a.started_at) < new Date(b.completed_at) && new Date(b.started_at) < new Date(a.completed_at);

  it("INGEST_CONCURRENCY=2: jobs of two pipelines run at the same time; the same pipeline twice still answers 409", async () => {
    await startWorkers({ INGEST_CONCURRENCY: "2" });
    const [a, b] = [await folderPipeline("one"), await folderPipeline("two")];
    await trigger(a.id);
    assert.equal((await request("POST", `/data_pipelines/${a.id}/ingest`, { token })).status, 409);
    await trigger(b.id);
    let together = 0;
    // b's job as first seen running beside a's: the one whose run must overlap a's.
    let seenB: string | null = null;
    let triedAgain = false;
    for (const deadline = Date.now() + 120_000; ; ) {
      assert.ok(Date.now() < deadline, "both jobs end within two minutes");
      const [sa, sb] = await Promise.all([jobStatus(a.id), jobStatus(b.id)]);
      if (running(sa) && running(sb)) {
        together++;
        seenB ??= sb.job_id;
        if (!triedAgain) {
          triedAgain = true;
          const again = await request("POST", `/data_pipelines/${b.id}/ingest`, { token });
          if (again.status === 202) {
            // On a busy machine b's job can end between the status read and this trigger: then a
            // new run is rightly accepted, and it must be a new job, never a second copy beside it.
            assert.ok(again.body.job_id && again.body.job_id !== sb.job_id, "a running pipeline still answers 409");
          } else {
            assert.equal(again.status, 409, "a running pipeline still answers 409");
            assert.equal(again.body.detail, "Ingestion already in progress for this pipeline");
          }
        }
      }
      if (sa.status !== "processing" && sb.status !== "processing") {
        assert.equal(sa.status, "completed", JSON.stringify(sa));
        assert.equal(sb.status, "completed", JSON.stringify(sb));
        assert.ok(together > 0, "both jobs were seen running at once");
        const jobs = (await request("GET", `/data_pipelines/${b.id}/jobs`, { token })).body as Array<{ job_id: string; started_at: string; completed_at: string }>;
        const first = jobs.find((j) => j.job_id === seenB);
        assert.ok(first, "b's first job is in its history");
        assert.ok(overlap(sa, first), `the runs overlap: ${JSON.stringify([sa.started_at, sa.completed_at, first.started_at, first.completed_at])}`);
        break;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  });

  it("INGEST_CONCURRENCY=2: two pipelines into one collection still run one after the other, and both land", async () => {
    const c = await folderPipeline("three");
    const other = await folderPipeline("four");
    const joined = await request("POST", "/data_pipelines", { token, body: { name: "four into three", description: "", data_source_id: other.source, collection_id: c.collection } });
    assert.equal(joined.status, 201, joined.text);
    const { a, b, together } = await runBoth(c.id, joined.body.id);
    assert.equal(together, 0, "never seen running at once");
    assert.equal(overlap(a, b), false, `the runs do not overlap: ${JSON.stringify([a.started_at, a.completed_at, b.started_at, b.completed_at])}`);
    const listed = (await request("GET", "/collections", { token })).body as Array<{ id: string; document_count: number }>;
    assert.equal(listed.find((x) => x.id === c.collection)?.document_count, 2 * FILES);
  });

  it("the default (1): two pipelines' jobs never run at the same time", async () => {
    await startWorkers({});
    const [e, f] = [await folderPipeline("five"), await folderPipeline("six")];
    const { a, b, together } = await runBoth(e.id, f.id);
    assert.equal(together, 0, "never seen running at once");
    assert.equal(overlap(a, b), false, `the runs do not overlap: ${JSON.stringify([a.started_at, a.completed_at, b.started_at, b.completed_at])}`);
  });
});
