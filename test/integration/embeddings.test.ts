import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { startSluice, teamEnv, tempDir, type SluiceServer } from "../fixtures/sluice-server";
import { startWorker } from "../fixtures/sluice-worker";
import { client, createGroup, signUp, waitForJobEnd, type Request } from "../fixtures/http-client";
import { makePptx } from "../fixtures/documents";
import { startFakeOllama, type FakeOllama } from "../fixtures/fake-ollama";
import { postSse } from "../fixtures/sse-client";
import { onPostgres } from "../fixtures/postgres";
import { WAIT_LIMIT_MS } from "../fixtures/wait-for";

// Hybrid retrieval (issue 23 item 4) end to end: a folder source, the fake Ollama's /api/embed
// (hashed bags of words with synonyms folded: "car" ~ "automobile", "doctor" ~ "physician"),
// the embedding stage of ingestion, and the three search modes. On the team run the same on
// PostgreSQL (the exact-similarity fallback) with jobs on the Redis queue.
let fake: FakeOllama;
let server: SluiceServer;
let request: Request;
let owner: { token: string };
let outsider: { token: string };
let collectionId: string;
let pipelineId: string;
const root = fs.realpathSync(tempDir("sluice-embed-root-"));
const docs = path.join(root, "docs");
const write = (name: string, text: string) => fs.writeFileSync(path.join(docs, name), text);

before(async () => {
  fs.mkdirSync(docs, { recursive: true });
  write("showroom.txt", "The automobile dealership opened a new showroom downtown.");
  write("checkup.txt", "The physician examined the patient and the doctor wrote notes.");
  write("clinic.txt", "The physician arrived early at the clinic.");
  write("ledger.txt", "The aardvark ledger balances every quarter.");
  fake = await startFakeOllama();
  server = await startSluice({ env: { FOLDER_SOURCE_ROOTS: root, OLLAMA_HOST: fake.url } });
  request = client(server.api);
  owner = await signUp(request, "embed-owner");
  outsider = await signUp(request, "embed-outsider");
  const group = await createGroup(request, owner.token);
  const created = await request("POST", `/data_sources/folder/${group}`, {
    token: owner.token,
    body: { data_source: { data_source_name: "Embedded docs" }, folder_source: { path: docs } },
  });
  assert.equal(created.status, 201, created.text);
  collectionId = created.body.pipeline.collection_id;
  pipelineId = created.body.pipeline.id;
  for (const model of ["nomic-embed-text", "tinyllama"]) {
    const pulled = await postSse(`${server.api}/models`, owner.token, { model_name: model });
    assert.equal(pulled.events.at(-1)?.status, "completed", JSON.stringify(pulled.events.slice(-2)));
  }
  assert.equal((await ingest()).status, "completed");
});
after(async () => {
  if (server && server.child.exitCode === null) await server.stop();
  await fake?.close();
  fs.rmSync(root, { recursive: true, force: true });
});

async function ingest() {
  const trigger = await request("POST", `/data_pipelines/${pipelineId}/ingest`, { token: owner.token });
  assert.equal(trigger.status, 202, trigger.text);
  return waitForJobEnd(request, owner.token, pipelineId);
}

async function search(q: string, mode?: string) {
  const res = await request("GET", `/collections/${collectionId}/search?q=${encodeURIComponent(q)}${mode ? `&mode=${mode}` : ""}`, { token: owner.token });
  assert.equal(res.status, 200, res.text);
  return { mode: res.body.mode as string, paths: (res.body.results as Array<{ path: string }>).map((r) => path.basename(r.path)) };
}

const setModel = (model: unknown, token = owner.token) => request("PUT", `/collections/${collectionId}/embedding`, { token, body: { model } });

describe("start-up", () => {
  it("a team server on PostgreSQL says which vector search it uses (here the fallback: no pgvector)", { skip: onPostgres() ? false : "the SQLite run has no PostgreSQL" }, () => {
    assert.match(server.output(), /vector search: exact similarity in SQL \(no pgvector\)/);
  });
});

describe("a collection without an embedding model", () => {
  it("searches by keyword by default; semantic and hybrid answer 400 saying a model is needed", async () => {
    const found = await search("doctor");
    assert.deepEqual(found, { mode: "keyword", paths: ["checkup.txt"] });
    for (const mode of ["semantic", "hybrid"]) {
      const res = await request("GET", `/collections/${collectionId}/search?q=car&mode=${mode}`, { token: owner.token });
      assert.equal(res.status, 400, res.text);
      assert.match(res.body.detail, /needs an embedding model/);
    }
    const bad = await request("GET", `/collections/${collectionId}/search?q=car&mode=fuzzy`, { token: owner.token });
    assert.equal(bad.status, 422, bad.text);
  });
});

describe("PUT /collections/{id}/embedding", () => {
  it("refuses a model outside the catalog and a catalog model that cannot embed (400), changing nothing", async () => {
    const unknown = await setModel("mxbai-embed-large");
    assert.equal(unknown.status, 400, unknown.text);
    assert.match(unknown.body.detail, /not in the catalog/);
    const chat = await setModel("tinyllama");
    assert.equal(chat.status, 400, chat.text);
    assert.match(chat.body.detail, /cannot embed/);
    const empty = await setModel("");
    assert.equal(empty.status, 422, empty.text);
    const listed = await request("GET", "/collections", { token: owner.token });
    assert.equal(listed.body.find((c: { id: string }) => c.id === collectionId).embedding_model, null);
  });

  it("answers 404 to a non-member and 401 without a token", async () => {
    assert.equal((await setModel("nomic-embed-text", outsider.token)).status, 404);
    assert.equal((await request("PUT", `/collections/${collectionId}/embedding`, { body: { model: null } })).status, 401);
  });

  it("turned on for a collection with documents, embeds them in a job with its own progress text", async () => {
    fake.embedDelayMs = 300;
    const before = fake.embeddedInputs;
    const res = await setModel("nomic-embed-text");
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.embedding_model, "nomic-embed-text:latest");
    assert.equal(res.body.job_ids.length, 1);
    let sawStage = false;
    const deadline = Date.now() + WAIT_LIMIT_MS;
    while (Date.now() < deadline) {
      const status = (await request("GET", `/data_pipelines/${pipelineId}/ingest/status`, { token: owner.token })).body;
      if (/Embedding/.test(status.current_entity ?? "")) sawStage = true;
      if (status.status !== "processing") break;
      await new Promise((r) => setTimeout(r, 50));
    }
    fake.embedDelayMs = 0;
    assert.ok(sawStage, "the job showed an embedding progress text");
    assert.equal((await waitForJobEnd(request, owner.token, pipelineId)).status, "completed");
    // The validation probe (one input), then the four one-chunk documents.
    assert.equal(fake.embeddedInputs - before, 1 + 4);
  });
});

describe("search modes with an embedding model", () => {
  it("semantic search finds a passage by meaning that keyword search misses", async () => {
    assert.deepEqual((await search("car", "keyword")).paths, []);
    const semantic = await search("car", "semantic");
    assert.equal(semantic.mode, "semantic");
    assert.equal(semantic.paths[0], "showroom.txt");
    // The search's filters apply to the vector ranking too.
    assert.deepEqual((await search("car", "semantic&type=pdf")).paths, []);
    assert.equal((await search("car", "semantic&type=txt")).paths[0], "showroom.txt");
    const grouped = await request("GET", `/collections/${collectionId}/search?q=doctor&group_by=document`, { token: owner.token });
    assert.equal(grouped.status, 200, grouped.text);
    assert.equal(path.basename(grouped.body.documents[0].path), "checkup.txt");
  });

  it("hybrid (the default now) ranks first what both rankings found, and keeps what only meaning found", async () => {
    const hybrid = await search("doctor");
    assert.equal(hybrid.mode, "hybrid");
    assert.equal(hybrid.paths[0], "checkup.txt");
    assert.ok(hybrid.paths.includes("clinic.txt"), hybrid.paths.join(","));
    assert.deepEqual((await search("doctor", "keyword")).paths, ["checkup.txt"]);
  });

  it("a re-run that changed nothing embeds nothing; a changed and a new file are embedded, a removed one leaves", async () => {
    let before = fake.embeddedInputs;
    assert.equal((await ingest()).status, "completed");
    assert.equal(fake.embeddedInputs - before, 0);

    write("ledger.txt", "The aardvark ledger now lists every vehicle of the fleet.");
    write("garage.txt", "Two automobiles wait in the garage.");
    fs.rmSync(path.join(docs, "showroom.txt"));
    before = fake.embeddedInputs;
    assert.equal((await ingest()).status, "completed");
    assert.equal(fake.embeddedInputs - before, 2);
    const semantic = (await search("car", "semantic")).paths;
    assert.ok(!semantic.includes("showroom.txt"), semantic.join(","));
    assert.deepEqual(semantic.slice(0, 2).sort(), ["garage.txt", "ledger.txt"]);
  });

  it("null turns it off: keyword again by default, the vectors are gone", async () => {
    const res = await setModel(null);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.embedding_model, null);
    assert.deepEqual(res.body.job_ids, []);
    assert.equal((await search("doctor")).mode, "keyword");
    // On again: every document is embedded afresh, as nothing was kept.
    const before = fake.embeddedInputs;
    const on = await setModel("nomic-embed-text");
    assert.equal(on.status, 200, on.text);
    assert.equal((await waitForJobEnd(request, owner.token, pipelineId)).status, "completed");
    assert.equal(fake.embeddedInputs - before, 1 + 4);
  });
});

describe("where a hit found only by meaning is", () => {
  it("a semantic and a hybrid hit say the slide, as a keyword hit does", async () => {
    const decks = path.join(root, "decks");
    fs.mkdirSync(decks, { recursive: true });
    fs.writeFileSync(path.join(decks, "fleet.pptx"), makePptx([["Agenda"], ["Every automobile of the fleet is insured"]]));
    const group = await createGroup(request, owner.token, "embed-decks");
    const created = await request("POST", `/data_sources/folder/${group}`, { token: owner.token, body: { data_source: { data_source_name: "Decks" }, folder_source: { path: decks } } });
    assert.equal(created.status, 201, created.text);
    const decksCollection = created.body.pipeline.collection_id;
    const set = await request("PUT", `/collections/${decksCollection}/embedding`, { token: owner.token, body: { model: "nomic-embed-text" } });
    assert.equal(set.status, 200, set.text);
    // A pipeline that never ran gets no job from the model; its first run embeds what it indexes.
    assert.equal((await request("POST", `/data_pipelines/${created.body.pipeline.id}/ingest`, { token: owner.token })).status, 202);
    assert.equal((await waitForJobEnd(request, owner.token, created.body.pipeline.id)).status, "completed");
    const placeOf = async (q: string, mode: string) => {
      const res = await request("GET", `/collections/${decksCollection}/search?q=${q}&mode=${mode}`, { token: owner.token });
      assert.equal(res.status, 200, res.text);
      return (res.body.results as Array<{ path: string; page: number | null; location_label: string | null; from_scan: boolean }>).map((r) => [path.basename(r.path), r.page, r.location_label, r.from_scan]);
    };
    // "car" is no word of the deck: only the vector ranking finds its slides (each slide is a chunk), nearest first.
    const bySlide = [
      ["fleet.pptx", 2, "slide 2", false],
      ["fleet.pptx", 1, "slide 1", false],
    ];
    assert.deepEqual(await placeOf("car", "semantic"), bySlide);
    assert.deepEqual(await placeOf("car", "hybrid"), bySlide);
    assert.deepEqual(await placeOf("insured", "keyword"), [["fleet.pptx", 2, "slide 2", false]]);
  });
});

describe("PUT /collections/{id}/embedding and other groups' sources", () => {
  it("starts jobs only for the pipelines the caller may trigger: one whose source is in a group the caller is not in is left alone", async () => {
    // A member of the collection's group who also has a source of their own group piped into it.
    const stranger = await signUp(request, "embed-stranger");
    const ownerGroup = (await request("GET", `/collections`, { token: owner.token })).body.find((c: { id: string }) => c.id === collectionId).owner_group_id;
    assert.equal((await request("PUT", `/user_groups/${ownerGroup}/members/${encodeURIComponent(stranger.email)}`, { token: owner.token })).status, 204);
    const theirGroup = await createGroup(request, stranger.token, "embed-theirs");
    const theirDocs = path.join(root, "theirs");
    fs.mkdirSync(theirDocs, { recursive: true });
    fs.writeFileSync(path.join(theirDocs, "garden.txt"), "The gardener planted tulips.");
    const source = await request("POST", `/data_sources/folder/${theirGroup}`, {
      token: stranger.token,
      body: { data_source: { data_source_name: "Their docs" }, folder_source: { path: theirDocs } },
    });
    assert.equal(source.status, 201, source.text);
    const piped = await request("POST", "/data_pipelines", { token: stranger.token, body: { name: "theirs into ours", data_source_id: source.body.data_source.id, collection_id: collectionId } });
    assert.equal(piped.status, 201, piped.text);

    assert.equal((await setModel(null)).status, 200);
    const set = await setModel("nomic-embed-text");
    assert.equal(set.status, 200, set.text);
    assert.equal(set.body.job_ids.length, 1, "only the owner's own pipeline");
    assert.equal((await waitForJobEnd(request, owner.token, pipelineId)).status, "completed");
    const theirs = await request("GET", `/data_pipelines/${piped.body.id}/ingest/status`, { token: stranger.token });
    assert.equal(theirs.status, 202, `their pipeline never ran: ${theirs.text}`);

    // The stranger reaches both sources: both pipelines get a job.
    assert.equal((await setModel(null, stranger.token)).status, 200);
    const both = await setModel("nomic-embed-text", stranger.token);
    assert.equal(both.status, 200, both.text);
    assert.equal(both.body.job_ids.length, 2);
    assert.equal((await waitForJobEnd(request, stranger.token, piped.body.id)).status, "completed");
    assert.equal((await waitForJobEnd(request, owner.token, pipelineId)).status, "completed");
  });
});

describe("team server", () => {
  // On the team run (PostgreSQL + Redis): an API process that takes no jobs, and `npm run worker`
  // on the same database and queue, which runs the embedding stage.
  const teamRun = process.env.SLUICE_TEST_REDIS === "1";
  it("the embedding stage runs on `npm run worker`, and the API process searches what it embedded", { skip: teamRun ? false : "the team run (PostgreSQL + Redis) only" }, async () => {
    const env = { FOLDER_SOURCE_ROOTS: root, OLLAMA_HOST: fake.url };
    const { dataDir, databaseUrl } = server;
    await server.stop();
    server = await startSluice({ dataDir, env: { ...env, SLUICE_WORKER: "0" } });
    request = client(server.api);
    const worker = startWorker({ ...env, DATA_DIR: dataDir, ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}), ...(await teamEnv(dataDir)) });
    try {
      // Its only word that is not a stop word is a synonym of "invoice": the nearest chunk whatever the hashing does to the others.
      write("depot.txt", "The receipt.");
      const before = fake.embeddedInputs;
      assert.equal((await ingest()).status, "completed");
      assert.equal(fake.embeddedInputs - before, 1, "only the new file was embedded");
      assert.match(worker.output(), /worker ready/);
      assert.equal((await search("invoice", "semantic")).paths[0], "depot.txt");
      assert.deepEqual((await search("invoice", "keyword")).paths, []);
    } finally {
      assert.equal(await worker.stop(), 0, worker.output());
    }
  });
});
