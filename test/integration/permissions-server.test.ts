import assert from "node:assert/strict";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import type { DataSource } from "typeorm";
import { EVERYONE_SID } from "../../server/access/windows-acl";
import type { FileAcl } from "../../server/search/stored-acl";
import { openDatabase } from "../../server/data/data-source";
import { PostgresFtsIndex } from "../../server/search/postgres";
import type { DocumentInput, SearchIndex } from "../../server/search/search-index";
import { SqliteFtsIndex } from "../../server/search/sqlite";
import { startFakeOllama, type FakeOllama } from "../fixtures/fake-ollama";
import { client, createGroup, signUp, waitForJobEnd, type Request } from "../fixtures/http-client";
import { startSluice, tempDir, type SluiceServer } from "../fixtures/sluice-server";
import { postSse } from "../fixtures/sse-client";

// The file server's permissions enforced by the real server, over HTTP, on SQLite and on the
// PostgreSQL re-run: documents with ACLs are written into the collection's index through the
// index interface (as a permission source's run writes them; its Samba end of the path is the SMB
// side's), next to a plain folder source's documents ingested for real. The caller has no linked
// Windows account, so only what Everyone may read shows (the product's default until links are
// wired in), in every search mode, the documents list, the counts and what an ask sends the model.

const SERVER = "fs.example";
const READ = 0x120089;
const HR = "S-1-5-21-1-2-3-2001";
const OPEN_SHARE = [{ kind: "allow" as const, inherited: false, mask: READ, sid: EVERYONE_SID }];
const HR_ONLY: FileAcl = { file: [{ kind: "allow", inherited: false, mask: READ, sid: HR }], share: OPEN_SHARE };
const EVERYONE: FileAcl = { file: [{ kind: "allow", inherited: false, mask: READ, sid: EVERYONE_SID }], share: OPEN_SHARE };
const EVERYONE_DENIED_FIRST: FileAcl = {
  file: [
    { kind: "deny", inherited: false, mask: READ, sid: EVERYONE_SID },
    { kind: "allow", inherited: false, mask: READ, sid: EVERYONE_SID },
  ],
  share: OPEN_SHARE,
};
const PERMISSION_SOURCE = crypto.randomUUID();
const SECRETS = 8;

let fake: FakeOllama;
let server: SluiceServer;
let request: Request;
let owner: { token: string };
let collectionId: string;
let pipelineId: string;
const root = fs.realpathSync(tempDir("sluice-perm-server-"));
const docs = path.join(root, "docs");
const closers: Array<() => Promise<void>> = [];

function permissionDoc(name: string, text: string, acl: FileAcl): DocumentInput {
  const at = new Date("2025-03-01T10:00:00Z");
  return { sourceId: PERMISSION_SOURCE, path: `dept/${name}`, title: name, size: text.length, modifiedAt: at, version: null, permissions: { server: SERVER, acl, changedAt: at }, chunks: [{ chunkIndex: 0, text }] };
}

/** The server's own collection index, opened from this process as a second writer (SQLite's WAL file, or its PostgreSQL database). */
async function serversIndex(): Promise<SearchIndex> {
  if (server.databaseUrl) {
    const db: DataSource = await openDatabase({ dataDir: os.tmpdir(), databaseUrl: server.databaseUrl });
    closers.push(() => db.destroy());
    return new PostgresFtsIndex(db);
  }
  const index = new SqliteFtsIndex({ dir: path.join(server.dataDir, "indexes") });
  closers.push(() => index.close());
  return index;
}

const titles = (results: Array<{ path: string }>) => results.map((r) => path.basename(r.path)).sort();

before(async () => {
  fs.mkdirSync(docs, { recursive: true });
  fs.writeFileSync(path.join(docs, "plain-heron.txt"), "A heron note from the plain share, which every member reads.");
  fs.writeFileSync(path.join(docs, "plain-otter.txt"), "Otters of the plain share.");
  fake = await startFakeOllama();
  server = await startSluice({ env: { FOLDER_SOURCE_ROOTS: root, OLLAMA_HOST: fake.url } });
  request = client(server.api);
  owner = await signUp(request, "perm-owner");
  const group = await createGroup(request, owner.token);
  const created = await request("POST", `/data_sources/folder/${group}`, { token: owner.token, body: { data_source: { data_source_name: "Plain share" }, folder_source: { path: docs } } });
  assert.equal(created.status, 201, created.text);
  collectionId = created.body.pipeline.collection_id;
  pipelineId = created.body.pipeline.id;
  assert.equal((await request("POST", `/data_pipelines/${pipelineId}/ingest`, { token: owner.token })).status, 202);
  assert.equal((await waitForJobEnd(request, owner.token, pipelineId)).status, "completed");
  const index = await serversIndex();
  await index.upsertDocuments(collectionId, [
    ...Array.from({ length: SECRETS }, (_, i) => permissionDoc(`salaries-${i}.txt`, `heron heron heron salaries of the harbour board ${i}`, HR_ONLY)),
    permissionDoc("canteen.txt", "The heron canteen menu for everyone.", EVERYONE),
    permissionDoc("denied.txt", "A heron file Everyone is denied first.", EVERYONE_DENIED_FIRST),
  ]);
  for (const model of ["nomic-embed-text", "tinyllama"]) {
    const pulled = await postSse(`${server.api}/models`, owner.token, { model_name: model });
    assert.equal(pulled.events.at(-1)?.status, "completed", JSON.stringify(pulled.events.slice(-2)));
  }
  // The embedding stage embeds every chunk, the hidden ones too: the vector ranking has them to leave out.
  const embedding = await request("PUT", `/collections/${collectionId}/embedding`, { token: owner.token, body: { model: "nomic-embed-text" } });
  assert.equal(embedding.status, 200, embedding.text);
  assert.equal((await waitForJobEnd(request, owner.token, pipelineId)).status, "completed");
});
after(async () => {
  for (const close of closers) await close();
  if (server && server.child.exitCode === null) await server.stop();
  await fake?.close();
  fs.rmSync(root, { recursive: true, force: true });
});

const search = async (q: string, mode: string, topK: number) => {
  const res = await request("GET", `/collections/${collectionId}/search?q=${encodeURIComponent(q)}&mode=${mode}&top_k=${topK}`, { token: owner.token });
  assert.equal(res.status, 200, res.text);
  return res.body.results as Array<{ path: string; snippet: string }>;
};

describe("documents with the file server's permissions, for a person with no linked account", () => {
  for (const mode of ["keyword", "semantic", "hybrid"]) {
    it(`${mode} search gives top_k readable results though unreadable ones rank above them`, async () => {
      assert.deepEqual(titles(await search("heron", mode, 2)), ["canteen.txt", "plain-heron.txt"]);
      const all = await search("heron", mode, 20);
      assert.ok(!all.some((r) => /salaries|denied/.test(r.path)), titles(all).join(","));
    });
  }

  it("grouped results hold only readable documents", async () => {
    const res = await request("GET", `/collections/${collectionId}/search?q=heron&group_by=document&mode=keyword`, { token: owner.token });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(titles(res.body.documents), ["canteen.txt", "plain-heron.txt"]);
  });

  it("the documents list and GET /collections count only what the caller may read", async () => {
    const list = await request("GET", `/collections/${collectionId}/documents`, { token: owner.token });
    assert.equal(list.status, 200, list.text);
    assert.equal(list.body.total, 3);
    assert.deepEqual(titles(list.body.documents), ["canteen.txt", "plain-heron.txt", "plain-otter.txt"]);
    const collections = await request("GET", "/collections", { token: owner.token });
    const mine = (collections.body as Array<{ id: string; document_count: number }>).find((c) => c.id === collectionId);
    assert.equal(mine?.document_count, 3);
  });

  it("an ask's sources, citations and the passages sent to the model are only readable ones", async () => {
    const before = fake.chats.length;
    const r = await postSse(`${server.api}/collections/${collectionId}/ask`, owner.token, { question: "What do the heron files say?", model: "tinyllama", top_k: 5 });
    assert.equal(r.status, 200);
    const sources = r.events[0].sources as Array<{ path: string }>;
    assert.ok(sources.length > 0);
    assert.ok(sources.every((s) => !/salaries|denied/.test(s.path)), titles(sources).join(","));
    const sent = fake.chats.slice(before).flatMap((chat) => chat.messages.map((m) => m.content)).join("\n");
    assert.ok(sent.includes("heron canteen"), "a readable passage reached the model");
    assert.ok(!sent.includes("salaries") && !sent.includes("Everyone is denied"), "no unreadable passage reached the model");
  });

  it("a re-run of the plain source leaves the permission source's documents as they are (management unchanged)", async () => {
    assert.equal((await request("POST", `/data_pipelines/${pipelineId}/ingest`, { token: owner.token })).status, 202);
    const done = await waitForJobEnd(request, owner.token, pipelineId);
    assert.deepEqual([done.status, done.files_unchanged, done.files_permissions_changed], ["completed", 2, 0]);
    assert.deepEqual(titles(await search("heron", "keyword", 10)), ["canteen.txt", "plain-heron.txt"]);
  });
});
