// npm test: once
// Why: the FTS5 files, their segments and their clean marks are the desktop's (SQLite); PostgreSQL's job end (the GIN fold) is postgres-fts-index's.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, describe, it } from "node:test";
import Database from "better-sqlite3";
import { tempDir } from "../fixtures/sluice-server";
import { createGroup, signUp, waitForJobEnd } from "../fixtures/http-client";
import { useSluice } from "../fixtures/use-sluice";
import { waitFor } from "../fixtures/wait-for";
import { cleanMarkPath, matchesCleanMark } from "../../server/search/sqlite/sqlite-fts-clean-mark";
import { MAX_SEGMENTS_KEPT, segmentCounts } from "../../server/search/sqlite/sqlite-fts-segments";

// A job's end through the real server: the writer thread, reached on the job thread's own
// channel, settles the collection's file (decisions 0501, 0502), right after it answered the
// job's end (0536): a test waits for the mark rather than expecting it with the job's status.

const root = fs.realpathSync(tempDir("sluice-job-end-"));
const FILES = 300;
for (let i = 0; i < FILES; i++) {
  const dir = path.join(root, "notes", `part-${i % 10}`);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, `note-${i}.txt`), `Note ${i} on the heron${i} count. ${"Tallies of wading birds by the marsh. ".repeat(30)}`);
}
let token = "";
let group = "";
const sluice = useSluice({
  env: { FOLDER_SOURCE_ROOTS: root },
  setUp: async ({ request }) => {
    ({ token } = await signUp(request, "job-end"));
    group = await createGroup(request, token);
  },
});
const { request } = sluice;
after(() => fs.rmSync(root, { recursive: true, force: true }));

/** The file as the server left it: its segments per table, its identity, and its mark's text (null without one). */
function fileState(file: string) {
  const db = new Database(file, { readonly: true });
  try {
    const { ino, size, mtimeMs, ctimeMs } = fs.statSync(file);
    const mark = fs.existsSync(cleanMarkPath(file)) ? fs.readFileSync(cleanMarkPath(file), "utf8") : null;
    return { segments: segmentCounts(db), identity: { ino, size, mtimeMs, ctimeMs }, mark };
  } finally {
    db.close();
  }
}

async function run(pipelineId: string): Promise<Record<string, any>> {
  assert.equal((await request("POST", `/data_pipelines/${pipelineId}/ingest`, { token })).status, 202);
  const job = await waitForJobEnd(request, token, pipelineId);
  assert.equal(job.status, "completed", JSON.stringify(job));
  return job;
}

/** The file once the writer has settled it after a job that wrote: the mark is written last. */
async function settledState(file: string, unlike: string | null = null) {
  await waitFor(() => fs.existsSync(cleanMarkPath(file)) && fs.readFileSync(cleanMarkPath(file), "utf8") !== unlike, "the clean mark after the job");
  return fileState(file);
}

describe("a job's end on the desktop's index", { skip: process.env.SLUICE_TEST_BACKEND === "postgres" ? "the index lives in PostgreSQL" : false }, () => {
  it("a job that wrote leaves at most 4 segments per table and a clean mark; a no-change re-run leaves the file and its mark as they were; a change marks it anew", async () => {
    const res = await request("POST", `/data_sources/folder/${group}`, { token, body: { data_source: { data_source_name: "Notes" }, folder_source: { path: path.join(root, "notes") } } });
    assert.equal(res.status, 201, res.text);
    const { id: pipelineId, collection_id: collectionId } = res.body.pipeline as { id: string; collection_id: string };
    const file = path.join(sluice.server.dataDir, "indexes", `${collectionId}.db`);

    await run(pipelineId);
    const first = await settledState(file);
    assert.ok(first.segments.chunks_fts <= MAX_SEGMENTS_KEPT && first.segments.chunks_exact <= MAX_SEGMENTS_KEPT, JSON.stringify(first.segments));
    assert.ok(first.mark, "the clean mark is beside the file");
    assert.equal((await request("GET", `/collections/${collectionId}/search?q=heron42`, { token })).body.results[0]?.path.endsWith("part-2/note-42.txt"), true);

    // Nothing changed in the folder: nothing is written, so no optimize, and the mark still matches.
    await run(pipelineId);
    assert.deepEqual(fileState(file), first);

    // A restart (every connection closed, the WAL gone) leaves the file as its mark says: the next process's first read need not check it.
    await sluice.restart();
    assert.equal((await request("GET", `/collections/${collectionId}/search?q=heron42`, { token })).status, 200);
    assert.ok(matchesCleanMark(file), "the mark still matches after a restart and a search");
    assert.deepEqual(fileState(file), first);

    fs.appendFileSync(path.join(root, "notes", "part-3", "note-13.txt"), " A late heron tally: bittern.");
    await run(pipelineId);
    const changed = await settledState(file, first.mark);
    assert.ok(changed.mark && changed.mark !== first.mark, "a job that wrote marks the file as it left it");
    assert.equal((await request("GET", `/collections/${collectionId}/search?q=bittern`, { token })).body.results[0]?.path.endsWith("part-3/note-13.txt"), true);
  });
});
