import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { client, createGroup, signUp, waitForJobEnd, type Request } from "../fixtures/http-client";
import { postgresBinDir, startPostgres, type PostgresCluster } from "../fixtures/postgres";
import { startSluice, tempDir, type SluiceServer } from "../fixtures/sluice-server";

// A team server whose PostgreSQL goes away and comes back (stopped and started by its pid) in
// the middle of an ingestion. Its own cluster, so stopping it touches no other test. On the
// SQLite run the server uses the in-process queue on PostgreSQL; on the team run (Redis) BullMQ.
const skip = postgresBinDir() ? false : "PostgreSQL is not installed (Debian package postgresql)";

const FILES = 3000;
let pg: PostgresCluster;
let root: string;

function writeFolder(name: string): string {
  const dir = path.join(root, name);
  for (let i = 0; i < FILES; i++) {
    const folder = path.join(dir, `part-${Math.floor(i / 300)}`);
    fs.mkdirSync(folder, { recursive: true });
    fs.writeFileSync(path.join(folder, `note-${i}.txt`), `Outage note ${i} about the ${name} heron. `.repeat(60));
  }
  return dir;
}

interface Team {
  server: SluiceServer;
  request: Request;
  token: string;
  group: string;
}

async function startTeam(graceSeconds: number): Promise<Team> {
  const databaseUrl = await pg.createDatabase();
  const server = await startSluice({ env: { DATABASE_URL: databaseUrl, FOLDER_SOURCE_ROOTS: root, DB_OUTAGE_GRACE_S: String(graceSeconds) } });
  const request = client(server.api);
  const { token } = await signUp(request, "outage");
  return { server, request, token, group: await createGroup(request, token, "outage") };
}

async function addFolder(team: Team, folder: string, name: string): Promise<{ id: string; collection_id: string }> {
  const res = await team.request("POST", `/data_sources/folder/${team.group}`, {
    token: team.token,
    body: { data_source: { data_source_name: name }, folder_source: { path: folder } },
  });
  assert.equal(res.status, 201, res.text);
  return res.body.pipeline;
}

/** Triggers a pipeline and waits until its job is indexing files (the outage must hit it mid-way). */
async function startIngestion(team: Team, pipelineId: string): Promise<void> {
  const res = await team.request("POST", `/data_pipelines/${pipelineId}/ingest`, { token: team.token });
  assert.equal(res.status, 202, res.text);
  const deadline = Date.now() + 60_000;
  for (;;) {
    const status = (await team.request("GET", `/data_pipelines/${pipelineId}/ingest/status`, { token: team.token })).body;
    assert.equal(status.status, "processing", `the job ended before the outage: ${JSON.stringify(status)}`);
    if (status.entities_processed > 0) return;
    assert.ok(Date.now() < deadline, "the job never started indexing");
    await new Promise((r) => setTimeout(r, 20));
  }
}

function assertUnavailable(res: { status: number; body: any; headers: Headers; text: string }, what: string): void {
  assert.equal(res.status, 503, `${what}: ${res.status} ${res.text}`);
  assert.match(res.body?.detail ?? "", /database is unreachable/i, what);
  assert.match(res.headers.get("retry-after") ?? "", /^\d+$/, `${what} carries Retry-After`);
}

describe("a database outage on a team server", { skip }, () => {
  before(async () => {
    pg = await startPostgres();
    root = fs.realpathSync(tempDir("sluice-outage-root-"));
  });
  after(async () => {
    await pg?.stop();
  });

  describe("shorter than DB_OUTAGE_GRACE_S", () => {
    let team: Team;
    let pipeline: { id: string; collection_id: string };
    let other: { id: string; collection_id: string };
    before(async () => {
      team = await startTeam(60);
      pipeline = await addFolder(team, writeFolder("short"), "Short outage");
      other = await addFolder(team, writeFolder("other"), "Other folder");
    });
    after(async () => {
      await team?.server.stop();
    });

    it("answers 503 with Retry-After while the database is down, keeps liveness, and the job carries on", async () => {
      const { request, token } = team;
      await startIngestion(team, pipeline.id);
      await pg.pause();
      try {
        assertUnavailable(await request("GET", "/collections", { token }), "GET /collections");
        assertUnavailable(await request("GET", `/data_pipelines/${pipeline.id}/ingest/status`, { token }), "GET status");
        // A trigger made now is refused, saying so: it is not silently lost.
        assertUnavailable(await request("POST", `/data_pipelines/${other.id}/ingest`, { token }), "POST ingest");
        const live = await request("GET", "/health");
        assert.deepEqual([live.status, live.body?.status], [200, "ok"], "liveness does not depend on the database");
        const ready = await request("GET", "/health/ready");
        assert.equal(ready.status, 503, ready.text);
        assert.equal(ready.body.checks.database, "unreachable");
        assert.match(ready.body.detail, /database/i);
        assert.match(ready.headers.get("retry-after") ?? "", /^\d+$/);
        await new Promise((r) => setTimeout(r, 3000));
      } finally {
        await pg.resume();
      }
      const done = await waitForJobEnd(request, token, pipeline.id);
      assert.equal(done.status, "completed", JSON.stringify(done));
      assert.equal(done.entities_discovered, FILES);
      assert.equal(done.entities_processed, FILES);
      assert.equal(done.entities_failed, 0, JSON.stringify(done.errors));
      const docs = await request("GET", `/collections/${pipeline.collection_id}/documents?limit=1`, { token });
      assert.equal(docs.body.total, FILES, "every file is in the collection once");
      const hits = await request("GET", `/collections/${pipeline.collection_id}/search?q=short+heron`, { token });
      assert.equal(hits.status, 200, hits.text);
      assert.ok(hits.body.results.length > 0);
      assert.doesNotMatch(team.server.output(), /Interrupted by shutdown/);
    });

    it("has no job from the refused trigger, takes the trigger again and reports ready", async () => {
      const { request, token } = team;
      const never = await request("GET", `/data_pipelines/${other.id}/ingest/status`, { token });
      assert.equal(never.status, 202, "the refused trigger left no job behind");
      const ready = await request("GET", "/health/ready");
      assert.equal(ready.status, 200, ready.text);
      assert.equal(ready.body.status, "ok");
      assert.equal(ready.body.checks.database, "ok");
      assert.equal((await request("POST", `/data_pipelines/${other.id}/ingest`, { token })).status, 202);
      const done = await waitForJobEnd(request, token, other.id);
      assert.equal(done.status, "completed", JSON.stringify(done));
    });
  });

  describe("longer than DB_OUTAGE_GRACE_S", () => {
    let team: Team;
    let pipeline: { id: string; collection_id: string };
    before(async () => {
      team = await startTeam(2);
      pipeline = await addFolder(team, writeFolder("long"), "Long outage");
    });
    after(async () => {
      await team?.server.stop();
    });

    it("fails the job with 'Database connection lost', and the next run picks up from what was committed", async () => {
      const { request, token } = team;
      await startIngestion(team, pipeline.id);
      await pg.pause();
      try {
        await new Promise((r) => setTimeout(r, 5000));
      } finally {
        await pg.resume();
      }
      const failed = await waitForJobEnd(request, token, pipeline.id);
      assert.equal(failed.status, "failed", JSON.stringify(failed));
      assert.equal(failed.error_message, "Database connection lost");
      assert.ok(failed.entities_processed < FILES, "it stopped part-way");
      const committed = (await request("GET", `/collections/${pipeline.collection_id}/documents?limit=1`, { token })).body.total;
      assert.ok(committed > 0 && committed < FILES, `some files were committed before the outage (${committed})`);

      assert.equal((await request("POST", `/data_pipelines/${pipeline.id}/ingest`, { token })).status, 202);
      const again = await waitForJobEnd(request, token, pipeline.id);
      assert.equal(again.status, "completed", JSON.stringify(again));
      assert.equal(again.entities_processed, FILES);
      assert.equal((await request("GET", `/collections/${pipeline.collection_id}/documents?limit=1`, { token })).body.total, FILES);
      // Files committed before the outage are not read again: at most the bytes of the rest are.
      const sizes = fs.readdirSync(path.join(root, "long"), { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => fs.statSync(path.join(e.parentPath, e.name)).size);
      const total = sizes.reduce((a, b) => a + b, 0);
      const bound = total - committed * Math.min(...sizes);
      assert.ok(again.bytes_processed > 0 && again.bytes_processed <= bound, `re-read ${again.bytes_processed} bytes, at most ${bound} expected (${committed} of ${FILES} were committed)`);
    });
  });
});
