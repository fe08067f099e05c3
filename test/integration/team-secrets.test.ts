import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { SAMBA_TIMEOUT_MS, startSamba, type SambaServer } from "../fixtures/samba";
import { startSluice, tempDir, type SluiceServer } from "../fixtures/sluice-server";
import { startWorker, type SluiceWorker } from "../fixtures/sluice-worker";
import { addSmbSource, client, createGroup, signUp, waitForJobEnd, type Request } from "../fixtures/http-client";
import { postgresBinDir, startPostgres, type PostgresCluster } from "../fixtures/postgres";
import { redisMissingReason, startRedis, type RedisServer } from "../fixtures/redis";
import { waitFor } from "../fixtures/wait-for";

// A team server on several machines: each machine has its own DATA_DIR (and so its own
// keychain or secrets file); the secrets every process needs live in the shared database,
// sealed with SECRETS_KEY. "Machines" here are processes with different DATA_DIRs.
const skip = (postgresBinDir() ? null : "PostgreSQL is not installed") ?? redisMissingReason() ?? false;

describe("team server secrets: shared through the database, sealed with SECRETS_KEY", { skip }, () => {
  let samba: SambaServer;
  let postgres: PostgresCluster;
  let redis: RedisServer;
  let databaseUrl: string;
  let api: SluiceServer;
  let request: Request;
  let owner: { email: string; token: string };
  let group: string;
  const secretsKey = randomBytes(32).toString("base64");
  let team: Record<string, string>;
  const workers: SluiceWorker[] = [];

  before(async () => {
    samba = await startSamba();
    postgres = await startPostgres();
    redis = await startRedis();
    databaseUrl = await postgres.createDatabase();
    team = { DATABASE_URL: databaseUrl, REDIS_URL: redis.url, REDIS_PREFIX: "secrets-test", SECRETS_KEY: secretsKey, SMB_TIMEOUT_MS: String(SAMBA_TIMEOUT_MS) };
    // The API machine takes no jobs itself: only workers elsewhere do.
    api = await startSluice({ dataDir: tempDir("sluice-machine-a-"), env: { ...team, SLUICE_WORKER: "0" } });
    request = client(api.api);
    owner = await signUp(request, "secrets");
    group = await createGroup(request, owner.token);
  });
  after(async () => {
    for (const worker of workers) await worker.stop();
    await api?.stop();
    await samba?.stop();
    await redis?.stop();
    await postgres?.stop();
  });

  const waitForOutput = (worker: SluiceWorker, text: string) =>
    waitFor(
      () => {
        if (worker.child.exitCode !== null) throw new Error(`worker exited before it printed "${text}":\n${worker.output()}`);
        return worker.output().includes(text);
      },
      () => `the worker to print "${text}":\n${worker.output()}`,
    );

  it("a worker on another machine reads the SMB password stored through the API, and the database holds it only sealed", async () => {
    const created = await addSmbSource(request, owner.token, group, samba, "Shared secrets");
    const { pipeline } = created;

    const worker = startWorker({ ...team, DATA_DIR: tempDir("sluice-machine-b-") });
    workers.push(worker);
    await waitForOutput(worker, "worker ready");
    assert.equal((await request("POST", `/data_pipelines/${pipeline.id}/ingest`, { token: owner.token })).status, 202);
    const job = await waitForJobEnd(request, owner.token, pipeline.id);
    assert.equal(job.status, "completed", `the worker could not use the source: ${JSON.stringify(job)}`);
    assert.ok((job.entities_processed as number) > 0);

    const rows = await postgres.query<{ name: string; sealed: string }>(databaseUrl, "SELECT name, sealed FROM secrets");
    const sourceId = created.data_source.id;
    assert.ok(rows.some((row) => row.name === `smb-password:${sourceId}`), JSON.stringify(rows.map((r) => r.name)));
    for (const row of rows) {
      assert.ok(!row.sealed.includes(samba.password), "no secret is stored in the clear");
      assert.ok(!Buffer.from(row.sealed, "base64").toString("latin1").includes(samba.password), "nor merely encoded");
    }
    assert.ok(!worker.output().includes(samba.password) && !worker.output().includes(secretsKey), "the worker logs no secret");
  });

  it("an API process on a third machine accepts the sessions the first one issued (one signing secret, kept in the database)", async () => {
    const third = await startSluice({ dataDir: tempDir("sluice-machine-c-"), env: { ...team, SLUICE_WORKER: "0" } });
    try {
      const me = await client(third.api)("GET", "/users/me", { token: owner.token });
      assert.equal(me.status, 200, me.text);
      assert.equal(me.body.email, owner.email);
    } finally {
      await third.stop();
    }
  });

  it("a process with a different SECRETS_KEY refuses to start, saying why, without printing a secret", async () => {
    const wrongKey = randomBytes(32).toString("base64");
    const worker = startWorker({ ...team, SECRETS_KEY: wrongKey, DATA_DIR: tempDir("sluice-machine-d-") });
    workers.push(worker);
    assert.equal(await worker.exited, 1);
    assert.match(worker.output(), /cannot be opened with this SECRETS_KEY: every API and worker process must run with the same SECRETS_KEY/);
    for (const secret of [wrongKey, secretsKey, samba.password]) assert.ok(!worker.output().includes(secret));
  });

  it("a malformed SECRETS_KEY is a configuration error that does not repeat the value", async () => {
    const worker = startWorker({ ...team, SECRETS_KEY: "not-a-key-but-maybe-a-password", DATA_DIR: tempDir("sluice-machine-e-") });
    workers.push(worker);
    assert.equal(await worker.exited, 1);
    assert.match(worker.output(), /SECRETS_KEY must be 32 random bytes written as 64 hex digits or in base64/);
    assert.ok(!worker.output().includes("not-a-key-but-maybe-a-password"));
  });
});
