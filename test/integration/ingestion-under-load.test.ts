import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { client, createGroup, signUp, waitForJobEnd, type Request } from "../fixtures/http-client";
import { startSluice, tempDir, type SluiceServer } from "../fixtures/sluice-server";
import { fillerParagraph } from "../fixtures/documents";

// The API while ingestion fills new collections: every collection below is new, so its index
// file is created while clients list collections, search them, page their documents and poll
// the jobs. Not one request may answer a 5xx (the load shedding queue is made large enough
// that it never sheds here, so 503 is no excuse either). On SQLite this is the race where the
// index file of a new collection was opened, and its tables created, by two threads at once.
const COLLECTIONS = 8;
const FILES = 25;
const CLIENTS = 6;

describe("the API hammered while ingestion creates new collections", () => {
  let server: SluiceServer;
  let request: Request;
  let token: string;
  const pipelines: Array<{ id: string; collection: string }> = [];
  const root = fs.realpathSync(tempDir("sluice-hammer-root-"));

  before(async () => {
    for (let c = 0; c < COLLECTIONS; c++) {
      const folder = path.join(root, `folder-${c}`);
      fs.mkdirSync(folder);
      for (let i = 0; i < FILES; i++) fs.writeFileSync(path.join(folder, `note-${i}.txt`), `${fillerParagraph(c * FILES + i, 60)} kestrel ${i}`);
    }
    server = await startSluice({ env: { FOLDER_SOURCE_ROOTS: root, SEARCH_QUEUE_LIMIT: "100000" } });
    request = client(server.api);
    ({ token } = await signUp(request, "hammer"));
    const group = await createGroup(request, token, "hammer");
    for (let c = 0; c < COLLECTIONS; c++) {
      const body = { data_source: { data_source_name: `Folder ${c}` }, folder_source: { path: path.join(root, `folder-${c}`) } };
      const created = await request("POST", `/data_sources/folder/${group}`, { token, body });
      assert.equal(created.status, 201, created.text);
      pipelines.push({ id: created.body.pipeline.id, collection: created.body.pipeline.collection_id });
    }
  });
  after(async () => {
    await server?.stop();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it("answers every request without a 5xx, and every job indexes every file", async () => {
    const failures: string[] = [];
    let requests = 0;
    let stop = false;
    const hammer = async (client: number) => {
      for (let round = 0; !stop; round++) {
        const target = pipelines[(client + round) % pipelines.length];
        const paths = [
          "/collections",
          `/collections/${target.collection}/search?q=kestrel&top_k=5`,
          `/collections/${target.collection}/documents?limit=5`,
          `/data_pipelines/${target.id}/ingest/status`,
        ];
        const path = paths[(client + round) % paths.length];
        const res = await request("GET", path, { token });
        requests++;
        if (res.status >= 500) failures.push(`${res.status} GET ${path}: ${res.text}`);
      }
    };
    const clients = Array.from({ length: CLIENTS }, (_, c) => hammer(c));
    try {
      // Triggered together: the queue runs them one after another, so a new collection's file
      // is created every few hundred milliseconds while the clients keep going.
      for (const p of pipelines) {
        const trigger = await request("POST", `/data_pipelines/${p.id}/ingest`, { token });
        assert.equal(trigger.status, 202, trigger.text);
      }
      for (const p of pipelines) {
        const job = await waitForJobEnd(request, token, p.id);
        assert.equal(job.status, "completed", JSON.stringify(job));
        assert.equal(job.entities_failed, 0, JSON.stringify(job.errors));
      }
    } finally {
      stop = true;
      await Promise.all(clients);
    }
    // The server's error lines name the cause (e.g. "SqliteError: table documents already exists").
    const errorLines = server.output().split("\n").filter((line) => /"level":"error"/.test(line));
    assert.deepEqual(failures, [], `${failures.length} of ${requests} requests answered 5xx; the server logged:\n${errorLines.join("\n")}`);
    assert.ok(requests > COLLECTIONS * 4, `the clients kept the API busy (${requests} requests)`);
    // And what was indexed is all there.
    const listed = await request("GET", "/collections", { token });
    assert.equal(listed.status, 200, listed.text);
    for (const p of pipelines) {
      const record = (listed.body as Array<{ id: string; document_count: number }>).find((c) => c.id === p.collection);
      assert.equal(record?.document_count, FILES, JSON.stringify(record));
      const found = await request("GET", `/collections/${p.collection}/search?q=kestrel&top_k=5`, { token });
      assert.equal(found.status, 200, found.text);
      assert.equal(found.body.results.length, 5);
    }
  });
});
