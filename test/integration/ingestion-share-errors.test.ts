import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { SAMBA_TIMEOUT_MS, startSamba, type SambaServer } from "../fixtures/samba";
import { startSluice, tempDir, type SluiceServer } from "../fixtures/sluice-server";
import { addSmbSource, client, createGroup, signUp, waitForJobEnd, type Request } from "../fixtures/http-client";

// Shares the user may not open: each is listed in the job's errors while the rest is indexed;
// a source none of whose shares can be read fails, saying why.

let partly: SambaServer;
let locked: SambaServer;
let server: SluiceServer;
let request: Request;
let owner: { email: string; token: string };
let group: string;

before(async () => {
  const teamDir = tempDir("sluice-team-share-");
  fs.chmodSync(teamDir, 0o755);
  fs.writeFileSync(path.join(teamDir, "roster.txt"), "The ocelot team meets on Tuesdays.");
  // `private` admits only the other user (fixture default); `team` is open.
  partly = await startSamba({ extraShares: { team: teamDir } });
  // Every share closed to the test user.
  locked = await startSamba({ shareOptions: { docs: { "valid users": "otheruser" } } });
  server = await startSluice({ env: { SMB_TIMEOUT_MS: String(SAMBA_TIMEOUT_MS) } });
  request = client(server.api);
  owner = await signUp(request, "shares");
  group = await createGroup(request, owner.token);
});
after(async () => {
  await server.stop();
  await partly.stop();
  await locked.stop();
});

async function run(samba: SambaServer, name: string) {
  const { pipeline } = await addSmbSource(request, owner.token, group, samba, name);
  const trigger = await request("POST", `/data_pipelines/${pipeline.id}/ingest`, { token: owner.token });
  assert.equal(trigger.status, 202, trigger.text);
  return { pipeline, job: await waitForJobEnd(request, owner.token, pipeline.id) };
}

describe("shares that cannot be opened", () => {
  it("a share the user may not open is listed in errors; the other shares are indexed and the job completes", async () => {
    const { pipeline, job } = await run(partly, "Partly readable");
    assert.equal(job.status, "completed", JSON.stringify(job));
    assert.equal(job.error_message, null);
    const denied = job.errors.filter((e: { entity: string }) => e.entity === "private");
    assert.equal(denied.length, 1, JSON.stringify(job.errors));
    assert.match(denied[0].message, /Access denied to share "private"/);
    assert.equal(job.entities_failed, 0, "a share is not a file");
    const hits = await request("GET", `/collections/${pipeline.collection_id}/search?q=ocelot`, { token: owner.token });
    assert.deepEqual(hits.body.results.map((h: { path: string }) => h.path), ["team/roster.txt"]);
    const docs = await request("GET", `/collections/${pipeline.collection_id}/search?q=${encodeURIComponent("two levels down")}`, { token: owner.token });
    assert.equal(docs.body.results[0]?.path, "docs/folder with spaces/sub dir/deep note.txt");
  });

  it("when no share can be read, the job fails with a message naming each share and why", async () => {
    const { pipeline, job } = await run(locked, "Nothing readable");
    assert.equal(job.status, "failed", JSON.stringify(job));
    assert.match(job.error_message, /^No share of this source could be read: /);
    assert.match(job.error_message, /docs: Access denied to share "docs" for this user/);
    assert.match(job.error_message, /private: Access denied to share "private" for this user/);
    assert.deepEqual(job.errors.map((e: { entity: string }) => e.entity).sort(), ["docs", "private"]);
    assert.equal(job.entities_discovered, 0);
    const status = await request("GET", `/data_pipelines/${pipeline.id}`, { token: owner.token });
    assert.equal(status.body.status, "failed");
  });
});
