import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { startSamba, type SambaServer } from "../fixtures/samba";
import { startSluice, tempDir, type SluiceServer } from "../fixtures/sluice-server";
import { startWorker, type SluiceWorker } from "../fixtures/sluice-worker";
import { addSmbSource, client, createGroup, signUp, waitForJobEnd, type Request } from "../fixtures/http-client";
import { redisMissingReason, startRedis, type RedisServer } from "../fixtures/redis";
import { waitFor } from "../fixtures/wait-for";

// A team server: two API processes and `npm run worker` share the database and Redis, and each
// runs a scheduler. All of them read one test clock (SLUICE_TEST_CLOCK_FILE); each due run must
// be started by exactly one of them.
const skip = redisMissingReason() ?? false;
const TICK_MS = 50;
const T0 = Date.parse("2030-06-03T08:00:00.000Z");
const MINUTE = 60_000;
const PIPELINES = 4;
const ROUNDS = 3;

let samba: SambaServer;
let redis: RedisServer;
const apis: SluiceServer[] = [];
let worker: SluiceWorker | null = null;
let clockFile: string;

const setClock = (ms: number) => fs.writeFileSync(clockFile, new Date(ms).toISOString());

describe("scheduled runs on a team server", { skip }, () => {
  before(async () => {
    samba = await startSamba();
    redis = await startRedis();
    clockFile = path.join(tempDir("sluice-team-clock-"), "now");
    setClock(T0);
    const dataDir = tempDir();
    const env = {
      REDIS_URL: redis.url,
      REDIS_PREFIX: "sched-team",
      SLUICE_WORKER: "0",
      SLUICE_TEST_CLOCK_FILE: clockFile,
      SLUICE_SCHEDULER_TICK_MS: String(TICK_MS),
    };
    apis.push(await startSluice({ dataDir, env }));
    // The second process on the first one's storage: its DATA_DIR and, on the PostgreSQL run, its database.
    const storage: Record<string, string> = apis[0].databaseUrl ? { DATABASE_URL: apis[0].databaseUrl } : {};
    apis.push(await startSluice({ dataDir, env: { ...env, ...storage } }));
    worker = startWorker({ ...env, ...storage, DATA_DIR: dataDir, SLUICE_WORKER: "1" });
    await waitFor(async () => worker!.output().includes("worker ready") || undefined, "the worker to start");
  });
  after(async () => {
    await worker?.stop();
    for (const api of apis) if (api.child.exitCode === null) await api.stop();
    await samba?.stop();
    await redis?.stop();
  });

  it("two API processes and a worker start each due run exactly once", async () => {
    const [one, two] = apis.map((api) => client(api.api));
    const owner = await signUp(one, "team-sched");
    const group = await createGroup(one, owner.token);
    const pipelines: string[] = [];
    for (let i = 0; i < PIPELINES; i++) {
      const { pipeline } = await addSmbSource(one, owner.token, group, samba, `Team schedule ${i}`);
      // Set through either process: the schedule is a row both read.
      const res = await (i % 2 ? two : one)("PUT", `/data_pipelines/${pipeline.id}/schedule`, { token: owner.token, body: { every_minutes: 10 } });
      assert.equal(res.status, 200, res.text);
      pipelines.push(pipeline.id);
    }
    const jobsOf = async (request: Request, id: string) => (await request("GET", `/data_pipelines/${id}/jobs`, { token: owner.token })).body as Record<string, any>[];

    for (let round = 1; round <= ROUNDS; round++) {
      // Every pipeline due at the same moment in every process's eyes.
      setClock(T0 + round * 10 * MINUTE + 1_000);
      for (const id of pipelines) {
        await waitFor(async () => (await jobsOf(one, id)).length >= round, `round ${round}'s run of ${id}`).catch((error: Error) => {
          throw new Error(`${error.message}\n${apis.map((api) => api.output()).join("\n")}\n${worker!.output()}`);
        });
        const end = await waitForJobEnd(two, owner.token, id);
        assert.equal(end.status, "completed", JSON.stringify(end));
      }
      // Many ticks of all three schedulers: a second start would show by now.
      await new Promise((r) => setTimeout(r, 20 * TICK_MS));
      for (const id of pipelines) {
        const jobs = await jobsOf(two, id);
        assert.equal(jobs.length, round, `${id} has ${jobs.length} jobs after round ${round}`);
        assert.ok(jobs.every((job) => job.trigger === "schedule"));
      }
    }
    for (const id of pipelines) {
      const { body } = await one("GET", `/data_pipelines/${id}`, { token: owner.token });
      assert.equal(body.schedule.skipped_runs, 0, "runs ended before the next was due");
      assert.equal(body.last_run.trigger, "schedule");
    }
    // Each started job was started by one process, and its log says which.
    const outputs = [...apis.map((api) => api.output()), worker!.output()];
    const starts = outputs.flatMap((out) => [...out.matchAll(/scheduled run of pipeline (\S+) started: job (\S+)/g)].map((m) => m[2]));
    assert.equal(starts.length, PIPELINES * ROUNDS);
    assert.equal(new Set(starts).size, PIPELINES * ROUNDS);
  });
});
