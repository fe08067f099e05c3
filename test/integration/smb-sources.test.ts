import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { SAMBA_TIMEOUT_MS, startSamba, startSilentServer, type SambaServer } from "../fixtures/samba";
import { countRows, startSluice, storedText } from "../fixtures/sluice-server";
import { client, createGroup, signUp, type ApiResponse, type Request } from "../fixtures/http-client";
import { useSluice } from "../fixtures/use-sluice";

let samba: SambaServer;
const responses: ApiResponse[] = [];

before(async () => {
  samba = await startSamba();
});
// A short SMB_TIMEOUT_MS let a busy machine's slow Samba answer the share listing 503.
const sluice = useSluice({ env: { SMB_TIMEOUT_MS: String(SAMBA_TIMEOUT_MS) } });
after(async () => {
  await samba.stop();
});
// Keep every response so the last test can prove no password ever appeared in one.
const request: Request = async (method, p, opts) => {
  const res = await sluice.request(method, p, opts);
  responses.push(res);
  return res;
};

function smbBody(name: string, overrides: Record<string, unknown> = {}) {
  return {
    data_source: { data_source_name: name },
    smb_source: {
      remote_system_username: samba.username,
      remote_smb_password: samba.password,
      remote_system_name: "localhost",
      local_system_name: "SLUICE-TEST",
      default_ip: "127.0.0.1",
      port: samba.port,
      ...overrides,
    },
  };
}

/** Row counts straight from the server's storage (SQLite file or PostgreSQL database). */
async function dbCounts(): Promise<{ sources: number; collections: number; pipelines: number; smb: number }> {
  const count = (table: string) => countRows(sluice.server, table);
  return { sources: await count("data_sources"), collections: await count("collections"), pipelines: await count("pipelines"), smb: await count("smb_sources") };
}

async function createSource(token: string, group: string, name = `Finance Share ${Date.now()}`) {
  const res = await request("POST", `/data_sources/smb/${group}`, { token, body: smbBody(name) });
  assert.equal(res.status, 201, res.text);
  return res.body;
}

describe("POST /data_sources/smb/{group_id}", () => {
  it("verifies the credentials, then creates source, collection and pipeline together (201)", async () => {
    const a = await signUp(request);
    const group = await createGroup(request, a.token);
    const before = await dbCounts();
    const res = await request("POST", `/data_sources/smb/${group}`, { token: a.token, body: smbBody("Finance Share") });
    assert.equal(res.status, 201, res.text);
    const { data_source, smb_source, pipeline } = res.body;
    assert.equal(data_source.data_source_name, "Finance Share");
    assert.equal(data_source.owner_group_id, group);
    assert.equal(smb_source.remote_system_username, samba.username);
    assert.equal(smb_source.port, samba.port);
    assert.equal(smb_source.default_ip, "127.0.0.1");
    assert.ok(!("remote_smb_password" in smb_source));
    assert.equal(pipeline.status, "inactive");
    assert.equal(pipeline.data_source_id, data_source.id);

    const collections = await request("GET", "/collections", { token: a.token });
    const collection = collections.body.find((c: { id: string }) => c.id === pipeline.collection_id);
    assert.match(collection.name, /^finance_share_[0-9a-f]{8}$/);
    assert.equal(collection.owner_group_id, group);
    assert.deepEqual(await dbCounts(), {
      sources: before.sources + 1,
      collections: before.collections + 1,
      pipelines: before.pipelines + 1,
      smb: before.smb + 1,
    });

    const listed = await request("GET", "/data_sources", { token: a.token });
    assert.deepEqual(listed.body.map((s: { id: string }) => s.id), [data_source.id]);
    assert.equal(listed.body[0].smb_source.remote_system_name, "localhost");
    const pipelines = await request("GET", "/data_pipelines", { token: a.token });
    assert.deepEqual(pipelines.body.map((p: { id: string }) => p.id), [pipeline.id]);
    const one = await request("GET", `/data_pipelines/${pipeline.id}`, { token: a.token });
    assert.equal(one.body.collection_id, pipeline.collection_id);
    const jobs = await request("GET", `/data_pipelines/${pipeline.id}/jobs`, { token: a.token });
    assert.deepEqual(jobs.body, []);
  });

  // Each failure keeps the spec's detail and adds a reason and a hint naming the field to fix.
  const failures: Array<[string, () => Record<string, unknown>, string, RegExp]> = [
    ["a wrong password", () => ({ remote_smb_password: "not-the-password" }), "logon_failure", /user name or password/],
    ["an unknown user", () => ({ remote_system_username: "mallory" }), "logon_failure", /user name or password/],
    ["a closed port", () => ({ port: 1 }), "connection_refused", /port/],
    ["a server name that does not resolve", () => ({ default_ip: null, remote_system_name: "nonexistent.invalid" }), "host_not_found", /server name/],
  ];
  for (const [why, overrides, reason, hint] of failures) {
    it(`answers 400 Invalid SMB credentials with reason ${reason} for ${why} and creates nothing`, async () => {
      const a = await signUp(request);
      const group = await createGroup(request, a.token);
      const before = await dbCounts();
      const res = await request("POST", `/data_sources/smb/${group}`, { token: a.token, body: smbBody("Broken", overrides()) });
      assert.equal(res.status, 400);
      assert.equal(res.body.detail, "Invalid SMB credentials");
      assert.equal(res.body.reason, reason);
      assert.match(res.body.hint, hint);
      assert.deepEqual(await dbCounts(), before);
      assert.deepEqual((await request("GET", "/collections", { token: a.token })).body, []);
    });
  }

  it("gives up at the creation check's 4 s on a server that accepts the connection but never answers, not at SMB_TIMEOUT_MS", async () => {
    const silent = await startSilentServer();
    // A minute of SMB_TIMEOUT_MS: the creation check's own 4 s (SMB_CHECK_TIMEOUT_MS) is what
    // must hold. Telling 4 s from 60 s leaves a loaded machine a wide margin, where a bound at the
    // spec's 5 s left it one second.
    const patient = await startSluice({ env: { SMB_TIMEOUT_MS: "60000" } });
    try {
      const req = client(patient.api);
      const a = await signUp(req);
      const group = await createGroup(req, a.token);
      const started = Date.now();
      const res = await req("POST", `/data_sources/smb/${group}`, { token: a.token, body: smbBody("Silent", { port: silent.port }) });
      const elapsed = Date.now() - started;
      assert.equal(res.status, 400);
      assert.equal(res.body.detail, "Invalid SMB credentials");
      assert.equal(res.body.reason, "timed_out");
      assert.match(res.body.hint, /did not answer/);
      assert.ok(elapsed < 30_000, `took ${elapsed} ms`);
      assert.equal((await req("GET", "/data_sources", { token: a.token })).body.length, 0);
    } finally {
      await patient.stop();
      await silent.close();
    }
  });

  it("answers 404 for a group the caller is not in, and 422 for invalid details", async () => {
    const a = await signUp(request);
    const b = await signUp(request);
    const group = await createGroup(request, a.token);
    assert.equal((await request("POST", `/data_sources/smb/${group}`, { token: b.token, body: smbBody("X") })).status, 404);
    const invalid = await request("POST", `/data_sources/smb/${group}`, { token: a.token, body: smbBody("X", { port: 70000, default_ip: "999.1.1.1" }) });
    assert.equal(invalid.status, 422);
    assert.deepEqual(invalid.body.errors.map((e: { field: string }) => e.field).sort(), ["smb_source.default_ip", "smb_source.port"]);
    const missing = await request("POST", `/data_sources/smb/${group}`, { token: a.token, body: { smb_source: {} } });
    assert.equal(missing.status, 422);
  });
});

describe("GET /data_sources/smb/list/{id}", () => {
  it("lists every disk share like smbclient -L, with first-level entries and an error entry for a share it cannot open", async () => {
    const a = await signUp(request);
    const group = await createGroup(request, a.token);
    const { data_source } = await createSource(a.token, group);
    const res = await request("GET", `/data_sources/smb/list/${data_source.id}`, { token: a.token });
    assert.equal(res.status, 200, res.text);

    const reference = execFileSync("smbclient", ["-L", "//127.0.0.1", "-p", String(samba.port), "-U", `${samba.username}%${samba.password}`, "-g"], {
      encoding: "utf8",
    });
    const diskShares = reference
      .split("\n")
      .filter((line) => line.startsWith("Disk|"))
      .map((line) => line.split("|")[1])
      .sort();
    assert.deepEqual(Object.keys(res.body.shares).sort(), diskShares);

    const docs = res.body.shares.docs as string[];
    assert.deepEqual(docs.slice().sort(), fs.readdirSync(samba.shareDir("docs")).sort());
    assert.ok(docs.includes("résumé ünïcode.txt"));
    assert.ok(docs.includes("folder with spaces"));
    assert.equal(typeof res.body.shares.private.error, "string");
    assert.ok(res.body.shares.private.error.length > 0);
    // The share this user may not open says so in a reason and a hint.
    assert.equal(res.body.shares.private.reason, "access_denied");
    assert.match(res.body.shares.private.hint, /may not open the share/);
  });

  it("answers 404 to someone outside the owner group, the same as for a random id", async () => {
    const a = await signUp(request);
    const b = await signUp(request);
    const group = await createGroup(request, a.token);
    const { data_source } = await createSource(a.token, group);
    const denied = await request("GET", `/data_sources/smb/list/${data_source.id}`, { token: b.token });
    const random = await request("GET", `/data_sources/smb/list/00000000-0000-4000-8000-000000000000`, { token: b.token });
    assert.equal(denied.status, 404);
    assert.deepEqual(denied.body, random.body);
  });
});

describe("pipelines", () => {
  it("POST /data_pipelines: 201 inactive; 400 for a duplicate pair; 404 without access to the source or the collection", async () => {
    const a = await signUp(request);
    const b = await signUp(request);
    const ga = await createGroup(request, a.token);
    const gb = await createGroup(request, b.token);
    const { data_source, pipeline } = await createSource(a.token, ga);
    const extra = (await request("POST", "/collections", { token: a.token, body: { name: `extra_${Date.now()}`, owner_group_id: ga } })).body;
    const bCollection = (await request("POST", "/collections", { token: b.token, body: { name: `bcol_${Date.now()}`, owner_group_id: gb } })).body;

    const created = await request("POST", "/data_pipelines", {
      token: a.token,
      body: { name: "second", description: "to extra", data_source_id: data_source.id, collection_id: extra.id },
    });
    assert.equal(created.status, 201);
    assert.equal(created.body.status, "inactive");
    assert.equal(created.body.name, "second");
    assert.equal(created.body.description, "to extra");

    const dup = await request("POST", "/data_pipelines", {
      token: a.token,
      body: { name: "dup", description: "", data_source_id: data_source.id, collection_id: pipeline.collection_id },
    });
    assert.equal(dup.status, 400);

    const foreignCollection = await request("POST", "/data_pipelines", {
      token: a.token,
      body: { name: "x", description: "", data_source_id: data_source.id, collection_id: bCollection.id },
    });
    assert.equal(foreignCollection.status, 404);
    const foreignSource = await request("POST", "/data_pipelines", {
      token: b.token,
      body: { name: "x", description: "", data_source_id: data_source.id, collection_id: bCollection.id },
    });
    assert.equal(foreignSource.status, 404);
    const random = await request("POST", "/data_pipelines", {
      token: b.token,
      body: { name: "x", description: "", data_source_id: "00000000-0000-4000-8000-000000000000", collection_id: bCollection.id },
    });
    assert.deepEqual(foreignSource.body, random.body);

    assert.equal((await request("GET", `/data_pipelines/${pipeline.id}`, { token: b.token })).status, 404);
    assert.equal((await request("GET", `/data_pipelines/${pipeline.id}/jobs`, { token: b.token })).status, 404);
    assert.deepEqual((await request("GET", "/data_pipelines", { token: b.token })).body, []);
  });
});

describe("deleting", () => {
  it("DELETE /data_sources/{id} removes the source, its pipeline and its collection (204)", async () => {
    const a = await signUp(request);
    const group = await createGroup(request, a.token);
    const before = await dbCounts();
    const { data_source, pipeline } = await createSource(a.token, group);
    const res = await request("DELETE", `/data_sources/${data_source.id}`, { token: a.token });
    assert.equal(res.status, 204);
    assert.deepEqual(await dbCounts(), before);
    assert.ok(!(await request("GET", "/collections", { token: a.token })).body.some((c: { id: string }) => c.id === pipeline.collection_id));
    assert.equal((await request("DELETE", `/data_sources/${data_source.id}`, { token: a.token })).status, 404);
  });

  it("keeps the collection while another source's pipeline still targets it", async () => {
    const a = await signUp(request);
    const group = await createGroup(request, a.token);
    const first = await createSource(a.token, group, "First");
    const second = await createSource(a.token, group, "Second");
    const link = await request("POST", "/data_pipelines", {
      token: a.token,
      body: { name: "into first's collection", description: "", data_source_id: second.data_source.id, collection_id: first.pipeline.collection_id },
    });
    assert.equal(link.status, 201);
    assert.equal((await request("DELETE", `/data_sources/${first.data_source.id}`, { token: a.token })).status, 204);
    const collections = (await request("GET", "/collections", { token: a.token })).body.map((c: { id: string }) => c.id);
    assert.ok(collections.includes(first.pipeline.collection_id), "still targeted by the second source's pipeline");
    const pipelines = (await request("GET", "/data_pipelines", { token: a.token })).body.map((p: { id: string }) => p.id);
    assert.ok(!pipelines.includes(first.pipeline.id));
    assert.ok(pipelines.includes(link.body.id));
  });

  it("a non-member cannot delete a source (404), and a group owning a source cannot be deleted (409 naming it)", async () => {
    const a = await signUp(request);
    const b = await signUp(request);
    const group = await createGroup(request, a.token);
    const { data_source } = await createSource(a.token, group, "Named Source");
    assert.equal((await request("DELETE", `/data_sources/${data_source.id}`, { token: b.token })).status, 404);
    const blocked = await request("DELETE", `/user_groups/${group}`, { token: a.token });
    assert.equal(blocked.status, 409);
    assert.match(blocked.body.detail, /Named Source/);
  });
});

describe("secrets and outages", () => {
  it("no SMB password in any response, in the database or in the logs", async () => {
    for (const res of responses) assert.ok(!res.text.includes(samba.password), `password in a response: ${res.text.slice(0, 200)}`);
    for (const file of fs.readdirSync(sluice.server.dataDir).filter((f) => f.startsWith("sluice.db"))) {
      assert.ok(!fs.readFileSync(path.join(sluice.server.dataDir, file)).includes(Buffer.from(samba.password)), `password in ${file}`);
    }
    const stored = await storedText(sluice.server);
    assert.ok(stored.includes(samba.username), "the storage scan sees the SMB sources");
    assert.ok(!stored.includes(samba.password), "password in the database");
    assert.ok(!fs.readFileSync(path.join(sluice.server.dataDir, "secrets.enc.json")).includes(Buffer.from(samba.password)));
    assert.ok(!sluice.server.output().includes(samba.password));
  });

  it("share listing answers 503 once the SMB server is gone", async () => {
    const a = await signUp(request);
    const group = await createGroup(request, a.token);
    const { data_source } = await createSource(a.token, group);
    await samba.stop();
    const res = await request("GET", `/data_sources/smb/list/${data_source.id}`, { token: a.token });
    assert.equal(res.status, 503);
    assert.match(res.body.detail, /unreachable/);
  });
});
