import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { after, before, describe, it } from "node:test";
import { startSluice, tempDir, type SluiceServer } from "../fixtures/sluice-server";
import { addSmbSource, client, createGroup, signUp, waitForJobEnd, type Request } from "../fixtures/http-client";
import { startSamba, type SambaServer } from "../fixtures/samba";

// Search results a person can use (issue 21): documents with their passages, where each file
// is (SMB: UNC path and smb:// URL; folder: absolute path and file:// URL), filters by type and
// folder, the note when not every word was found, and exact words first (issue 14).
let server: SluiceServer;
let samba: SambaServer;
let request: Request;
let owner: { token: string };
let folderCollection = "";
let smbCollection = "";
const root = fs.realpathSync(tempDir("sluice-search-root-"));
const folder = path.join(root, "library");

function write(file: string, text: string) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}

async function ingest(pipelineId: string) {
  assert.equal((await request("POST", `/data_pipelines/${pipelineId}/ingest`, { token: owner.token })).status, 202);
  const done = await waitForJobEnd(request, owner.token, pipelineId);
  assert.equal(done.status, "completed", JSON.stringify(done));
}

before(async () => {
  // One long document with the gannet in many paragraphs (chunks), which on chunk hits alone fills the page.
  write(path.join(folder, "birds", "gannet-survey.md"), Array.from({ length: 12 }, (_, i) => `## Part ${i}\n\n${"The gannet colony was counted again from the cliff. ".repeat(30)}`).join("\n\n"));
  write(path.join(folder, "birds", "field-notes.txt"), "Saw one gannet diving near the harbour.");
  write(path.join(folder, "reports", "gannet.csv"), "species,count\ngannet,40\n");
  write(path.join(folder, "reports", "tern.txt"), "The tern and the puffin shared the rock.");
  // Exact words first: many files say "tally" in every form, one says "tallyman" once.
  for (let i = 0; i < 15; i++) write(path.join(folder, "tallies", `t${i}.txt`), "tallies tallied tally tallying tally tallies");
  write(path.join(folder, "people", "harbourmaster.txt"), `${"The harbour log records the weather and the boats. ".repeat(20)} The tallyman came at noon.`);

  samba = await startSamba({ populate: (docs) => write(path.join(docs, "minutes", "board q3.txt"), "The osprey committee approved the budget.") });
  server = await startSluice({ env: { FOLDER_SOURCE_ROOTS: root } });
  request = client(server.api);
  owner = await signUp(request, "search-owner");
  const group = await createGroup(request, owner.token);

  const created = await request("POST", `/data_sources/folder/${group}`, {
    token: owner.token,
    body: { data_source: { data_source_name: "Library" }, folder_source: { path: folder } },
  });
  assert.equal(created.status, 201, created.text);
  folderCollection = created.body.pipeline.collection_id;
  await ingest(created.body.pipeline.id);

  const smb = await addSmbSource(request, owner.token, group, samba, "Board share");
  smbCollection = smb.pipeline.collection_id;
  await ingest(smb.pipeline.id);
});
after(async () => {
  if (server && server.child.exitCode === null) await server.stop();
  await samba?.stop();
  fs.rmSync(root, { recursive: true, force: true });
});

async function search(collectionId: string, query: string) {
  const res = await request("GET", `/collections/${collectionId}/search?${query}`, { token: owner.token });
  assert.equal(res.status, 200, res.text);
  return res.body;
}

describe("GET /collections/{id}/search", () => {
  it("keeps the chunk results as before and adds each hit's location and whether every word matched", async () => {
    const body = await search(folderCollection, "q=gannet&top_k=5");
    assert.equal(body.matched, "all");
    assert.equal(body.documents, undefined, "documents only with group_by=document");
    assert.equal(body.results.length, 5);
    for (const hit of body.results) {
      for (const field of ["document_id", "path", "title", "chunk_index", "snippet", "score", "data_source_id", "exact"]) assert.ok(field in hit, field);
      const absolute = path.join(folder, ...hit.path.split("/"));
      assert.deepEqual(hit.location, { path: absolute, url: pathToFileURL(absolute).href });
    }
  });

  it("chunk results show each document's best chunk before any document's second, and drop none", async () => {
    // The survey's ~24 chunks each say "gannet" 30 times: on their scores alone they would fill the page.
    const body = await search(folderCollection, "q=gannet&top_k=10");
    const paths = body.results.map((h: { path: string }) => h.path);
    assert.equal(paths.length, 10);
    assert.deepEqual(paths.slice(0, 3).sort(), ["birds/field-notes.txt", "birds/gannet-survey.md", "reports/gannet.csv"], paths.join(", "));
    assert.ok(paths.slice(3).every((p: string) => p === "birds/gannet-survey.md"), paths.join(", "));
    const all = await search(folderCollection, "q=gannet&top_k=100");
    const surveyChunks = all.results.filter((h: { path: string }) => h.path === "birds/gannet-survey.md").length;
    assert.ok(surveyChunks > 10, `every chunk of the survey is still there (${surveyChunks})`);
    assert.equal(all.results.length, surveyChunks + 2);
  });

  it("group_by=document answers one entry per document with its best passages, each from its own text", async () => {
    const body = await search(folderCollection, "q=gannet&group_by=document&top_k=3");
    const docs = body.documents as Array<Record<string, any>>;
    assert.equal(docs.length, 3, JSON.stringify(docs.map((d) => d.path)));
    assert.equal(new Set(docs.map((d) => d.document_id)).size, 3);
    assert.deepEqual(docs.map((d) => d.path).sort(), ["birds/field-notes.txt", "birds/gannet-survey.md", "reports/gannet.csv"]);
    const survey = docs.find((d) => d.path === "birds/gannet-survey.md")!;
    assert.equal(survey.passages.length, 3, "up to three passages under a document");
    assert.equal(new Set(survey.passages.map((p: { chunk_index: number }) => p.chunk_index)).size, 3);
    for (const p of survey.passages) assert.match(p.snippet, /<mark>gannet<\/mark> colony/);
    assert.equal(docs.find((d) => d.path === "birds/field-notes.txt")!.passages[0].snippet, "Saw one <mark>gannet</mark> diving near the harbour.");
    assert.equal(survey.folder, "birds");
    assert.equal(survey.type, "md");
    assert.equal(survey.location.path, path.join(folder, "birds", "gannet-survey.md"));
    // The chunk results the documents were built from are still there.
    assert.ok(body.results.length >= 5);
  });

  it("filters by file type and folder before ranking", async () => {
    const csv = await search(folderCollection, "q=gannet&type=CSV,.xlsx");
    assert.deepEqual(csv.results.map((h: { path: string }) => h.path), ["reports/gannet.csv"]);
    const birds = await search(folderCollection, `q=gannet&group_by=document&folder=${encodeURIComponent("\\birds\\")}`);
    assert.deepEqual(birds.documents.map((d: { path: string }) => d.path).sort(), ["birds/field-notes.txt", "birds/gannet-survey.md"]);
    const none = await search(folderCollection, "q=gannet&folder=bird");
    assert.deepEqual(none.results, [], "a folder is a whole path segment, not a prefix of a name");
  });

  it("says when not every word was found and the results are for any of them", async () => {
    const body = await search(folderCollection, "q=puffin%20gannet%20&group_by=document");
    assert.equal(body.matched, "any");
    const paths = body.documents.map((h: { path: string }) => h.path);
    assert.ok(paths.includes("reports/tern.txt") && paths.includes("birds/field-notes.txt"), paths.join(", "));
  });

  it("a rare word typed exactly finds its file first although its stem fills the collection", async () => {
    const body = await search(folderCollection, "q=tallyman&group_by=document");
    assert.equal(body.documents[0].path, "people/harbourmaster.txt");
    assert.equal(body.documents[0].exact, true);
    assert.ok(body.documents.slice(1).every((d: { exact: boolean }) => !d.exact));
  });

  it("an SMB document is located by its UNC path and smb:// URL", async () => {
    const body = await search(smbCollection, "q=osprey&group_by=document");
    assert.equal(body.documents.length, 1);
    const [doc] = body.documents;
    assert.equal(doc.path, "docs/minutes/board q3.txt");
    assert.deepEqual(doc.location, { path: "\\\\localhost\\docs\\minutes\\board q3.txt", url: `smb://localhost:${samba.port}/docs/minutes/board%20q3.txt` });
    assert.deepEqual(body.results[0].location, doc.location);
  });

  it("rejects a type that is not an extension, with detail, and an unknown group_by", async () => {
    for (const query of ["q=x&type=p%25df", "q=x&type=a*", "q=x&group_by=folder"]) {
      const res = await request("GET", `/collections/${folderCollection}/search?${query}`, { token: owner.token });
      assert.equal(res.status, 422, query);
      assert.ok(res.body.detail, query);
    }
  });
});
