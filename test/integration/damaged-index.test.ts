import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { startSamba, type SambaServer } from "../fixtures/samba";
import { startSluice, tempDir, type SluiceServer } from "../fixtures/sluice-server";
import { addSmbSource, client, createGroup, signUp, waitForJobEnd, type Request } from "../fixtures/http-client";

const DAMAGED = /index of this collection is damaged.*re-run the collection's pipeline to rebuild it/;

let samba: SambaServer;
let server: SluiceServer;
let request: Request;
let token: string;

before(async () => {
  const share = tempDir("sluice-notes-");
  for (let i = 0; i < 120; i++) fs.writeFileSync(path.join(share, `note-${i}.txt`), `Note ${i} about the pelican${i} survey. ${"Field notes and tallies. ".repeat(60)}`);
  fs.chmodSync(share, 0o755);
  samba = await startSamba({ extraShares: { notes: share } });
  server = await startSluice();
  request = client(server.api);
  ({ token } = await signUp(request, "damage"));
});
after(async () => {
  if (server.child.exitCode === null) await server.stop();
  await samba.stop();
});

async function ingest(pipelineId: string) {
  assert.equal((await request("POST", `/data_pipelines/${pipelineId}/ingest`, { token })).status, 202);
  return waitForJobEnd(request, token, pipelineId);
}

async function listed(collectionId: string) {
  const res = await request("GET", "/collections", { token });
  assert.equal(res.status, 200, res.text);
  return res.body.find((c: { id: string }) => c.id === collectionId);
}

// The FTS5 files under DATA_DIR/indexes are the desktop's; a team server's index lives in PostgreSQL.
describe("a damaged collection index", { skip: process.env.SLUICE_TEST_BACKEND === "postgres" ? "the index lives in PostgreSQL" : false }, () => {
  let damaged: { pipeline: string; collection: string };
  let healthy: { pipeline: string; collection: string };
  let documentCount: number;
  const indexFile = (collectionId: string) => path.join(server.dataDir, "indexes", `${collectionId}.db`);

  it("a truncated index file (server stopped) hides no other collection and is listed as damaged", async () => {
    const group = await createGroup(request, token);
    const a = await addSmbSource(request, token, group, samba, "Damaged");
    const b = await addSmbSource(request, token, group, samba, "Healthy");
    damaged = { pipeline: a.pipeline.id, collection: a.pipeline.collection_id };
    healthy = { pipeline: b.pipeline.id, collection: b.pipeline.collection_id };
    assert.equal((await ingest(damaged.pipeline)).status, "completed");
    assert.equal((await ingest(healthy.pipeline)).status, "completed");
    documentCount = (await listed(damaged.collection)).document_count;
    assert.ok(documentCount > 100);
    assert.equal((await listed(damaged.collection)).index_status, "ok");

    await server.stop();
    const file = indexFile(damaged.collection);
    fs.truncateSync(file, Math.floor(fs.statSync(file).size / 2));
    server = await startSluice({ dataDir: server.dataDir });
    request = client(server.api);

    const a2 = await listed(damaged.collection);
    assert.equal(a2.index_status, "damaged");
    const b2 = await listed(healthy.collection);
    assert.equal(b2.index_status, "ok");
    assert.equal(b2.document_count, documentCount);
  });

  it("its search and documents answer 503 saying the index is damaged and that re-running rebuilds it; others answer", async () => {
    for (const url of [`/collections/${damaged.collection}/search?q=pelican7`, `/collections/${damaged.collection}/documents`]) {
      const res = await request("GET", url, { token });
      assert.equal(res.status, 503, res.text);
      assert.match(res.body.detail, DAMAGED);
    }
    const res = await request("GET", `/collections/${healthy.collection}/search?q=pelican7`, { token });
    assert.equal(res.status, 200);
    assert.ok(res.body.results.some((r: { path: string }) => r.path.endsWith("note-7.txt")));
  });

  it("re-running the pipeline moves the damaged file aside (kept) and rebuilds the collection completely", async () => {
    const done = await ingest(damaged.pipeline);
    assert.equal(done.status, "completed", JSON.stringify(done));
    const aside = fs.readdirSync(path.join(server.dataDir, "indexes")).filter((f) => f.startsWith(`${damaged.collection}.damaged-`) && f.endsWith(".db"));
    assert.equal(aside.length, 1, "the damaged file is kept beside the new one");
    const rebuilt = await listed(damaged.collection);
    assert.equal(rebuilt.index_status, "ok");
    assert.equal(rebuilt.document_count, documentCount);
    const res = await request("GET", `/collections/${damaged.collection}/search?q=pelican42`, { token });
    assert.equal(res.status, 200);
    assert.ok(res.body.results.some((r: { path: string }) => r.path.endsWith("note-42.txt")));
  });
});
