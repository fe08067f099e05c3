// npm test: once
// Why: the folder rules (roots, links, dot-entries, DATA_DIR) are the connector's; sources, runs and search on PostgreSQL are re-run by smb-sources, ingestion and search-results.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { countRows, tempDir } from "../fixtures/sluice-server";
import { createGroup, signUp, waitForJobEnd } from "../fixtures/http-client";
import { useSluice } from "../fixtures/use-sluice";
import { folderRefusal } from "../../server/connectors/folder/folder-rules";

// Folder sources against real folders: a root listed in FOLDER_SOURCE_ROOTS, a folder outside
// it with a secret, and links from inside the root leading out.
let owner: { token: string };
let group: string;
const root = fs.realpathSync(tempDir("sluice-folder-root-"));
const outside = fs.realpathSync(tempDir("sluice-folder-outside-"));
const docs = path.join(root, "docs");

function write(file: string, text: string) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}

before(async () => {
  write(path.join(docs, "notes.txt"), "The aardvark ledger balances every quarter.");
  write(path.join(docs, "sub", "deep.md"), "# Memo\n\nThe platypus memo is two levels down.");
  write(path.join(outside, "secret.txt"), "A classified walrus document that must never be indexed.");
  write(path.join(root, "plain-file.txt"), "not a folder");
  // Dot-entries and a FIFO inside the source: never walked (a FIFO read would hang the job).
  write(path.join(docs, ".git", "config"), "[core] the quokka repository");
  write(path.join(docs, ".env"), "WOMBAT_TOKEN=do-not-index");
  assert.equal(spawnSync("mkfifo", [path.join(docs, "pipe")]).status, 0, "mkfifo");
  // Links inside the tree: two lead out of the root, one stays inside (its target is read under its own path).
  fs.symlinkSync(path.join(outside, "secret.txt"), path.join(docs, "escape.txt"));
  fs.symlinkSync(outside, path.join(docs, "escape-dir"));
  fs.symlinkSync(path.join(docs, "notes.txt"), path.join(docs, "inner-link.txt"));
  // Links as the source path itself: one leading out, one to a folder inside the root.
  fs.symlinkSync(outside, path.join(root, "link-out"));
  fs.symlinkSync(docs, path.join(root, "docs-link"));
});
const off = useSluice();
const sluice = useSluice({
  env: { FOLDER_SOURCE_ROOTS: root },
  setUp: async ({ request }) => {
    owner = await signUp(request, "folder-owner");
    group = await createGroup(request, owner.token);
  },
});
const { request } = sluice;
after(async () => {
  fs.rmSync(root, { recursive: true, force: true });
  fs.rmSync(outside, { recursive: true, force: true });
});

function folderBody(folderPath: unknown, name = "Local docs") {
  return { data_source: { data_source_name: name }, folder_source: { path: folderPath } };
}

async function counts() {
  return {
    sources: await countRows(sluice.server, "data_sources"),
    folders: await countRows(sluice.server, "folder_sources"),
    collections: await countRows(sluice.server, "collections"),
    pipelines: await countRows(sluice.server, "pipelines"),
  };
}

async function search(collectionId: string, q: string) {
  const res = await request("GET", `/collections/${collectionId}/search?q=${encodeURIComponent(q)}`, { token: owner.token });
  assert.equal(res.status, 200, res.text);
  return res.body.results as Array<{ path: string }>;
}

async function ingest(pipelineId: string) {
  const trigger = await request("POST", `/data_pipelines/${pipelineId}/ingest`, { token: owner.token });
  assert.equal(trigger.status, 202, trigger.text);
  return waitForJobEnd(request, owner.token, pipelineId);
}

describe("folder sources while FOLDER_SOURCE_ROOTS is unset", () => {
  it("creation answers 503 saying the kind is off and where the administrator turns it on; the status says so too", async () => {
    const offRequest = off.request;
    const user = await signUp(offRequest, "folder-off");
    const offGroup = await createGroup(offRequest, user.token);
    const res = await offRequest("POST", `/data_sources/folder/${offGroup}`, { token: user.token, body: folderBody(docs) });
    assert.equal(res.status, 503, res.text);
    assert.match(res.body.detail, /Folder sources are off/);
    assert.match(res.body.detail, /FOLDER_SOURCE_ROOTS/);
    assert.equal(await countRows(off.server, "data_sources"), 0);
    const status = await offRequest("GET", "/data_sources/folder", { token: user.token });
    assert.deepEqual(status.body, { enabled: false, roots: [] });
  });
});

describe("POST /data_sources/folder/{group_id}", () => {
  it("reports the roots the form must stay inside", async () => {
    const res = await request("GET", "/data_sources/folder", { token: owner.token });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { enabled: true, roots: [root] });
    assert.equal((await request("GET", "/data_sources/folder")).status, 401);
  });

  it("refuses in one set of words, nothing created, whatever is wrong once the path is well formed: outside the roots, '..' leading out, a link leading out, a file, missing, a dot-folder", async () => {
    const before = await counts();
    const refused = [
      outside,
      path.join(outside, "secret.txt"),
      path.join(outside, "missing"),
      `${docs}/../../${path.basename(outside)}`,
      `${root}/..`,
      path.join(root, "link-out"),
      path.join(root, "plain-file.txt"),
      path.join(root, "missing"),
      path.join(docs, ".git"),
      path.join(docs, "escape-dir"),
    ];
    const details = new Set<string>();
    for (const folderPath of refused) {
      const res = await request("POST", `/data_sources/folder/${group}`, { token: owner.token, body: folderBody(folderPath) });
      assert.equal(res.status, 400, `${folderPath}: ${res.text}`);
      details.add(res.body.detail);
    }
    assert.deepEqual([...details], [`folder_source.path ${folderRefusal({ dotfiles: "skip" })}`], "the same words for every case: an answer tells nothing of what exists");
    assert.equal([...details][0].includes(outside), false, "the detail does not echo the path");
    const malformed: Array<[unknown, number, RegExp]> = [
      ["docs", 400, /^folder_source\.path must be an absolute folder path/],
      ["", 422, /folder_source\.path is required/],
      [42, 422, /folder_source\.path/],
    ];
    for (const [folderPath, status, detail] of malformed) {
      const res = await request("POST", `/data_sources/folder/${group}`, { token: owner.token, body: folderBody(folderPath) });
      assert.equal(res.status, status, `${String(folderPath)}: ${res.text}`);
      assert.match(res.body.detail, detail, String(folderPath));
    }
    assert.deepEqual(await counts(), before);
  });

  it("resolves '..' in the path as written: one that stays inside the root is that folder, stored normalised", async () => {
    const res = await request("POST", `/data_sources/folder/${group}`, { token: owner.token, body: folderBody(`${docs}/sub/../sub`, "Dotted path") });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.folder_source.path, path.join(docs, "sub"));
    assert.equal((await request("DELETE", `/data_sources/${res.body.data_source.id}`, { token: owner.token })).status, 204);
  });

  it("a non-member of the group gets 404, the same as for a missing group, and nothing is created", async () => {
    const stranger = await signUp(request, "folder-stranger");
    const before = await counts();
    const denied = await request("POST", `/data_sources/folder/${group}`, { token: stranger.token, body: folderBody(docs) });
    const missing = await request("POST", `/data_sources/folder/${crypto.randomUUID()}`, { token: stranger.token, body: folderBody(docs) });
    assert.equal(denied.status, 404);
    assert.deepEqual(denied.body, missing.body);
    assert.deepEqual(await counts(), before);
  });

  it("accepts a link whose real path is inside a root", async () => {
    const res = await request("POST", `/data_sources/folder/${group}`, { token: owner.token, body: folderBody(path.join(root, "docs-link"), "Linked docs") });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.folder_source.path, path.join(root, "docs-link"));
    assert.equal((await request("DELETE", `/data_sources/${res.body.data_source.id}`, { token: owner.token })).status, 204);
  });
});

describe("a folder source from creation to deletion", () => {
  let created: { data_source: { id: string; kind: string }; folder_source: { path: string }; pipeline: { id: string; collection_id: string; data_source_id: string } };

  it("creates source, collection and pipeline together (201), listed with folder_source and smb_source null", async () => {
    const before = await counts();
    const res = await request("POST", `/data_sources/folder/${group}`, { token: owner.token, body: folderBody(`${docs}/`) });
    assert.equal(res.status, 201, res.text);
    created = res.body;
    assert.deepEqual(Object.keys(res.body).sort(), ["data_source", "folder_source", "pipeline"]);
    assert.equal(created.data_source.kind, "folder");
    assert.deepEqual(created.folder_source, { data_source_id: created.data_source.id, path: docs }, "stored normalised");
    assert.equal(created.pipeline.data_source_id, created.data_source.id);
    assert.deepEqual(await counts(), {
      sources: before.sources + 1,
      folders: before.folders + 1,
      collections: before.collections + 1,
      pipelines: before.pipelines + 1,
    });
    const listed = (await request("GET", "/data_sources", { token: owner.token })).body.find((s: { id: string }) => s.id === created.data_source.id);
    assert.equal(listed.smb_source, null);
    assert.deepEqual(listed.folder_source, created.folder_source);
    assert.equal(listed.kind, "folder");
  });

  it("ingests every file, finds the content by search, and never reads through a link leading out of the root", async () => {
    const done = await ingest(created.pipeline.id);
    assert.equal(done.status, "completed", JSON.stringify(done));
    assert.equal((await search(created.pipeline.collection_id, "aardvark ledger"))[0]?.path, "notes.txt");
    assert.equal((await search(created.pipeline.collection_id, "platypus memo"))[0]?.path, "sub/deep.md");
    assert.deepEqual(await search(created.pipeline.collection_id, "classified walrus"), [], "nothing from outside the root");
    assert.deepEqual(await search(created.pipeline.collection_id, "quokka"), [], "nothing from a dot-folder");
    assert.deepEqual(await search(created.pipeline.collection_id, "WOMBAT_TOKEN"), [], "nothing from a dot-file");
    const refused = done.errors.filter((e: { message: string }) => /link leading out of the source folder/.test(e.message)).map((e: { entity: string }) => e.entity);
    assert.deepEqual(refused.sort(), ["escape-dir", "escape.txt"]);
    assert.equal(done.entities_failed, 2);
    // The link inside the tree, the dot-entries and the FIFO are left out: the link's target is indexed under its own path only.
    assert.equal(done.entities_discovered, 4, JSON.stringify(done));
    const documents = await request("GET", `/collections/${created.pipeline.collection_id}/documents`, { token: owner.token });
    assert.deepEqual(documents.body.documents.map((d: { path: string }) => d.path).sort(), ["notes.txt", "sub/deep.md"]);
  });

  it("an incremental run indexes new and changed files, drops deleted ones and refuses a folder swapped for a link leading out", async () => {
    write(path.join(docs, "added.txt"), "A narwhal budget was added later.");
    write(path.join(docs, "notes.txt"), "The tangerine ledger replaced the old one.");
    fs.rmSync(path.join(docs, "sub"), { recursive: true });
    fs.symlinkSync(outside, path.join(docs, "sub"));
    const done = await ingest(created.pipeline.id);
    assert.equal(done.status, "completed", JSON.stringify(done));
    const collection = created.pipeline.collection_id;
    assert.equal((await search(collection, "narwhal budget"))[0]?.path, "added.txt");
    assert.equal((await search(collection, "tangerine"))[0]?.path, "notes.txt");
    assert.deepEqual(await search(collection, "aardvark"), [], "the old text of a changed file is gone");
    assert.deepEqual(await search(collection, "platypus"), [], "a deleted file is gone");
    assert.deepEqual(await search(collection, "classified walrus"), []);
    assert.ok(done.errors.some((e: { entity: string; message: string }) => e.entity === "sub" && /link leading out/.test(e.message)), JSON.stringify(done.errors));
  });

  it("a run re-checks the folder: one that now leads out of the root fails the job and reads nothing", async () => {
    const moving = path.join(root, "moving");
    fs.mkdirSync(moving);
    const res = await request("POST", `/data_sources/folder/${group}`, { token: owner.token, body: folderBody(moving, "Moving") });
    assert.equal(res.status, 201, res.text);
    fs.rmdirSync(moving);
    fs.symlinkSync(outside, moving);
    const done = await ingest(res.body.pipeline.id);
    assert.equal(done.status, "failed");
    assert.ok(done.error_message.endsWith(`The source's folder ${folderRefusal({ dotfiles: "skip" })}`), done.error_message);
    assert.deepEqual(await search(res.body.pipeline.collection_id, "classified walrus"), []);
    assert.equal((await request("DELETE", `/data_sources/${res.body.data_source.id}`, { token: owner.token })).status, 204);
  });

  it("delete removes the source, its folder details, pipeline and collection", async () => {
    const before = await counts();
    const res = await request("DELETE", `/data_sources/${created.data_source.id}`, { token: owner.token });
    assert.equal(res.status, 204, res.text);
    assert.deepEqual(await counts(), {
      sources: before.sources - 1,
      folders: before.folders - 1,
      collections: before.collections - 1,
      pipelines: before.pipelines - 1,
    });
    assert.equal((await request("GET", `/collections/${created.pipeline.collection_id}/search?q=tangerine`, { token: owner.token })).status, 404);
    assert.ok(fs.existsSync(path.join(docs, "notes.txt")), "the folder itself is left alone");
  });
});

describe("Sluice's own data folder under a root", () => {
  const dataRoot = fs.realpathSync(tempDir("sluice-folder-dataroot-"));
  const dataDir = path.join(dataRoot, "sluice-data");
  let admin: { token: string };
  let adminGroup: string;
  const withData = useSluice({
    env: { FOLDER_SOURCE_ROOTS: dataRoot, DATA_DIR: dataDir },
    setUp: async ({ request: ask }) => {
      write(path.join(dataRoot, "docs", "report.txt"), "The kiwi report sits beside the data folder.");
      write(path.join(dataDir, "planted", "planted.txt"), "A cassowary note planted in the data folder.");
      admin = await signUp(ask, "folder-data-owner");
      adminGroup = await createGroup(ask, admin.token);
    },
  });
  after(() => fs.rmSync(dataRoot, { recursive: true, force: true }));

  it("is refused as a source folder, it and anything inside it, in the same words as every refusal", async () => {
    for (const folderPath of [dataDir, path.join(dataDir, "planted"), `${dataRoot}/docs/../sluice-data`]) {
      const res = await withData.request("POST", `/data_sources/folder/${adminGroup}`, { token: admin.token, body: folderBody(folderPath) });
      assert.equal(res.status, 400, `${folderPath}: ${res.text}`);
      assert.equal(res.body.detail, `folder_source.path ${folderRefusal({ dotfiles: "skip" })}`);
    }
  });

  it("is never walked or indexed when a source folder holds it", async () => {
    const res = await withData.request("POST", `/data_sources/folder/${adminGroup}`, { token: admin.token, body: folderBody(dataRoot, "Around the data") });
    assert.equal(res.status, 201, res.text);
    const trigger = await withData.request("POST", `/data_pipelines/${res.body.pipeline.id}/ingest`, { token: admin.token });
    assert.equal(trigger.status, 202, trigger.text);
    const done = await waitForJobEnd(withData.request, admin.token, res.body.pipeline.id);
    assert.equal(done.status, "completed", JSON.stringify(done));
    assert.equal(done.entities_discovered, 1, JSON.stringify(done));
    const documents = await withData.request("GET", `/collections/${res.body.pipeline.collection_id}/documents`, { token: admin.token });
    assert.deepEqual(documents.body.documents.map((d: { path: string }) => d.path), ["docs/report.txt"]);
  });
});
