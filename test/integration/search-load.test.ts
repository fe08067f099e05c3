import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { client, createGroup, signUp, waitForJobEnd, type Request } from "../fixtures/http-client";
import { onPostgres } from "../fixtures/postgres";
import { startSluice, tempDir, type SluiceServer } from "../fixtures/sluice-server";
import { fillerParagraph } from "../fixtures/documents";

// Load shedding of desktop searches: with one reader thread and no room to wait, a burst of
// searches answers 503 with Retry-After for what cannot be served at once, never a 500 or a long
// wait, and every other search answers what a search alone answers.
const skip = onPostgres() ? "the search reader threads belong to the desktop (SQLite) index" : false;

describe("searches under a burst, with the reader queue made tiny", { skip }, () => {
  let server: SluiceServer;
  let request: Request;
  let token: string;
  let collection: string;

  before(async () => {
    const root = fs.realpathSync(tempDir("sluice-load-root-"));
    const docs = path.join(root, "docs");
    fs.mkdirSync(docs);
    for (let i = 0; i < 400; i++) fs.writeFileSync(path.join(docs, `memo-${i}.txt`), `${fillerParagraph(i, 400)} heron ${i % 2 ? "ledger" : ""}`);
    server = await startSluice({ env: { FOLDER_SOURCE_ROOTS: root, SEARCH_READERS: "1", SEARCH_QUEUE_LIMIT: "0", SEARCH_CACHE_MB: "0" } });
    request = client(server.api);
    ({ token } = await signUp(request, "load"));
    const group = await createGroup(request, token, "load");
    const created = await request("POST", `/data_sources/folder/${group}`, { token, body: { data_source: { data_source_name: "Memos" }, folder_source: { path: docs } } });
    assert.equal(created.status, 201, created.text);
    collection = created.body.pipeline.collection_id;
    assert.equal((await request("POST", `/data_pipelines/${created.body.pipeline.id}/ingest`, { token })).status, 202);
    assert.equal((await waitForJobEnd(request, token, created.body.pipeline.id)).status, "completed");
  });
  after(async () => {
    await server?.stop();
  });

  it("answers 200 with the right results or 503 with Retry-After, nothing else", async () => {
    const query = `/collections/${collection}/search?q=heron+ledger&top_k=20`;
    const alone = await request("GET", query, { token });
    assert.equal(alone.status, 200, alone.text);
    assert.equal(alone.body.results.length, 20);
    const burst = await Promise.all(Array.from({ length: 100 }, () => request("GET", query, { token })));
    const statuses = new Set(burst.map((r) => r.status));
    assert.deepEqual([...statuses].filter((s) => s !== 200 && s !== 503), [], "only 200 and 503");
    const shed = burst.filter((r) => r.status === 503);
    assert.ok(shed.length > 0, "a burst beyond one thread and an empty queue is shed");
    assert.ok(shed.length < burst.length, "and the thread still serves");
    for (const r of shed) {
      assert.equal(r.headers.get("retry-after"), "1");
      assert.match(r.body.detail, /busy/);
    }
    for (const r of burst.filter((b) => b.status === 200)) assert.deepEqual(r.body, alone.body);
    // Still serving afterwards, and the document pages (also on the reader) too.
    assert.deepEqual((await request("GET", query, { token })).body, alone.body);
    const page = await request("GET", `/collections/${collection}/documents?limit=5`, { token });
    assert.equal(page.status, 200, page.text);
    assert.equal(page.body.total, 400);
  });
});
