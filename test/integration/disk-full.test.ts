import assert from "node:assert/strict";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { SAMBA_TIMEOUT_MS, startSamba, type SambaServer } from "../fixtures/samba";
import { startSluice, tempDir, type SluiceServer } from "../fixtures/sluice-server";
import { addSmbSource, client, createGroup, signUp, waitForJobEnd, type Request } from "../fixtures/http-client";
import { mountSmallFs, type SmallFs } from "../fixtures/small-fs";

const MB = 1_000_000;
const NO_SPACE = /^Not enough disk space in DATA_DIR: \d+(\.\d)? (kB|MB|bytes) free$/;

/** Files whose words are all different, so the index grows about as fast as the text. */
function writeWordyShare(dir: string, count: number): void {
  for (let i = 0; i < count; i++) {
    const words = Array.from({ length: 1500 }, () => crypto.randomBytes(5).toString("hex"));
    fs.writeFileSync(path.join(dir, `wordy-${i}.txt`), `marker${i}x ${words.join(" ")}`);
  }
}

/**
 * The test file system's size. The first run fills it with a filler (leaveFree), so its size only
 * sets the room left once the filler is gone: the completed run's index (300 files of words
 * found nowhere else) must leave enough for a server to start on it again (at 48 MB a CI run's
 * restart once failed with ENOSPC).
 */
const SIZE_MB = 96;
const small = mountSmallFs(SIZE_MB);
const skip = "skip" in small ? small.skip : false;
let samba: SambaServer;

before(async () => {
  if (skip) return;
  const share = tempDir("sluice-wordy-");
  writeWordyShare(share, 300);
  fs.chmodSync(share, 0o755);
  samba = await startSamba({ extraShares: { wordy: share } });
});
after(async () => {
  await samba?.stop();
  if (!("skip" in small)) small.unmount();
});

// The desktop runs on the SQLite files under DATA_DIR; on PostgreSQL the disk that fills is the database server's.
describe("a full disk under DATA_DIR", { skip: skip || (process.env.SLUICE_TEST_BACKEND === "postgres" ? "DATA_DIR holds no data on PostgreSQL" : false) }, () => {
  const fsys = small as SmallFs;
  let server: SluiceServer;
  let request: Request;
  let token: string;
  let pipelineId: string;
  let collectionId: string;

  before(async () => {
    if (skip) return;
    // A minimum of 1 MB: the job starts with 1.5 MB free and must run out of room on the way.
    server = await startSluice({ dataDir: fsys.dir, env: { MIN_FREE_DISK_MB: "1", SMB_TIMEOUT_MS: String(SAMBA_TIMEOUT_MS) } });
    request = client(server.api);
    ({ token } = await signUp(request, "disk"));
    const group = await createGroup(request, token);
    const source = await addSmbSource(request, token, group, samba, "Wordy");
    pipelineId = source.pipeline.id;
    collectionId = source.pipeline.collection_id;
  });
  after(async () => {
    if (server && server.child.exitCode === null) await server.stop();
  });

  it("GET /api/health reports DATA_DIR's free space beside status ok, and low when it is", async () => {
    const res = await request("GET", "/health");
    assert.equal(res.status, 200);
    assert.equal(res.body.status, "ok");
    assert.equal(res.body.disk.total_bytes, SIZE_MB * 1024 * 1024);
    assert.ok(Math.abs(res.body.disk.free_bytes - fsys.freeBytes()) < 2 * MB, JSON.stringify(res.body));
    assert.equal(res.body.disk.low, true, `${SIZE_MB} MB free is under the 1 GB warning line`);
  });

  it("an ingestion that fills the disk fails with the cause and the free space; the server stays up and reads answer", async () => {
    fsys.leaveFree(1.5 * MB);
    const trigger = await request("POST", `/data_pipelines/${pipelineId}/ingest`, { token });
    assert.equal(trigger.status, 202, trigger.text);
    const done = await waitForJobEnd(request, token, pipelineId);
    assert.equal(done.status, "failed", JSON.stringify(done));
    assert.match(done.error_message, NO_SPACE);
    assert.equal(server.child.exitCode, null, `the server process exited:\n${server.output()}`);
    assert.doesNotMatch(server.output(), /unhandled|uncaught/i);

    const collections = await request("GET", "/collections", { token });
    assert.equal(collections.status, 200);
    assert.equal(collections.body.find((c: { id: string }) => c.id === collectionId).index_status, "ok");
    assert.equal((await request("GET", `/collections/${collectionId}/documents`, { token })).status, 200);
    assert.equal((await request("GET", `/collections/${collectionId}/search?q=marker1x`, { token })).status, 200);
    assert.equal((await request("GET", `/data_pipelines/${pipelineId}`, { token })).body.status, "failed");
    assert.equal((await request("GET", "/health")).body.status, "ok");
  });

  it("after space is freed, the next run completes and every file is found", async () => {
    fsys.freeUp();
    assert.equal((await request("POST", `/data_pipelines/${pipelineId}/ingest`, { token })).status, 202);
    const done = await waitForJobEnd(request, token, pipelineId);
    assert.equal(done.status, "completed", JSON.stringify(done));
    for (const i of [0, 150, 299]) {
      const res = await request("GET", `/collections/${collectionId}/search?q=marker${i}x`, { token });
      assert.equal(res.status, 200);
      assert.ok(res.body.results.some((r: { path: string }) => r.path.endsWith(`wordy-${i}.txt`)), `marker${i}x not found`);
    }
  });

  it("below MIN_FREE_DISK_MB a triggered job fails at once, before it writes to the index, and says why", async () => {
    await server.stop();
    assert.ok(fsys.freeBytes() > 8 * MB, `room for the server to start again: ${fsys.freeBytes()} bytes free`);
    server = await startSluice({ dataDir: fsys.dir, env: { MIN_FREE_DISK_MB: "1000" } });
    request = client(server.api);
    const before = fs.readdirSync(path.join(fsys.dir, "indexes")).map((f) => [f, fs.statSync(path.join(fsys.dir, "indexes", f)).mtimeMs]);
    const trigger = await request("POST", `/data_pipelines/${pipelineId}/ingest`, { token });
    assert.equal(trigger.status, 202, trigger.text);
    const done = await waitForJobEnd(request, token, pipelineId);
    assert.equal(done.status, "failed");
    assert.match(done.error_message, /^Not enough disk space in DATA_DIR: \d+\.\d MB free$/);
    assert.equal(done.entities_discovered, 0, "it did not even list the source");
    const afterRun = fs.readdirSync(path.join(fsys.dir, "indexes")).map((f) => [f, fs.statSync(path.join(fsys.dir, "indexes", f)).mtimeMs]);
    assert.deepEqual(afterRun, before, "no index file was written");
  });
});
