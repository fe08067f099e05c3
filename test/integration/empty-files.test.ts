import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, describe, it } from "node:test";
import { createGroup, signUp, waitForJobEnd } from "../fixtures/http-client";
import { toPng } from "../fixtures/scans";
import { tempDir } from "../fixtures/sluice-server";
import { useSluice } from "../fixtures/use-sluice";

// Files that yield no text (issue 35 item 4; decision 0497): a blank scanned page OCR finds no
// words in and an empty text file are skipped "empty", and remembered, so a re-run with nothing
// changed reads, parses and OCRs neither again; a change, a deletion or new text ends that.

const root = fs.realpathSync(tempDir("sluice-empty-files-"));
const library = path.join(root, "library");
const blankPng = path.join(library, "scans", "blank.png");
const emptyTxt = path.join(library, "empty.txt");
/** A white page as a scanner saves it: OCR runs on it and finds no words. */
const BLANK_PAGE = toPng({ width: 850, height: 1100, pixels: new Uint8Array(850 * 1100).fill(255) });

fs.mkdirSync(path.dirname(blankPng), { recursive: true });
fs.writeFileSync(blankPng, BLANK_PAGE);
fs.writeFileSync(emptyTxt, "");
fs.writeFileSync(path.join(library, "notes.txt"), "The lighthouse keeper counts the gannets.");

let owner: { email: string; token: string };
let pipeline = "";
let collection = "";
const sluice = useSluice({
  env: { FOLDER_SOURCE_ROOTS: root },
  setUp: async ({ request }) => {
    owner = await signUp(request, "empty-owner");
    const group = await createGroup(request, owner.token);
    const created = await request("POST", `/data_sources/folder/${group}`, {
      token: owner.token,
      body: { data_source: { data_source_name: "Scans and notes" }, folder_source: { path: library } },
    });
    assert.equal(created.status, 201, created.text);
    pipeline = created.body.pipeline.id;
    collection = created.body.pipeline.collection_id;
  },
});
const { request } = sluice;
after(() => fs.rmSync(root, { recursive: true, force: true }));

async function run(): Promise<Record<string, any>> {
  const trigger = await request("POST", `/data_pipelines/${pipeline}/ingest`, { token: owner.token });
  assert.equal(trigger.status, 202, trigger.text);
  const job = await waitForJobEnd(request, owner.token, pipeline);
  assert.equal(job.status, "completed", JSON.stringify(job));
  return job;
}

function skips(job: Record<string, any>): string[][] {
  return (job.skipped as Array<{ entity: string; reason: string }>).map((s) => [s.entity, s.reason]).sort();
}

async function documentPaths(): Promise<string[]> {
  const res = await request("GET", `/collections/${collection}/documents`, { token: owner.token });
  assert.equal(res.status, 200, res.text);
  return (res.body.documents as Array<{ path: string }>).map((d) => d.path).sort();
}

/** Moves a file's modification time on (a save without new text). */
function touch(file: string, seconds: number): void {
  const at = new Date(Date.now() + seconds * 1000);
  fs.utimesSync(file, at, at);
}

describe("files without text", () => {
  it("the first run reads them and skips them as empty; they are no documents", async () => {
    const job = await run();
    assert.deepEqual(skips(job), [
      ["empty.txt", "empty"],
      ["scans/blank.png", "empty"],
    ]);
    assert.equal(job.files_added, 1);
    assert.equal(job.bytes_processed, fs.statSync(blankPng).size + fs.statSync(path.join(library, "notes.txt")).size);
    assert.deepEqual(await documentPaths(), ["notes.txt"]);
  });

  it("a run with nothing changed reads none of them again (no bytes, no OCR) and skips them as empty again", async () => {
    const job = await run();
    assert.equal(job.bytes_processed, 0);
    assert.equal(job.timings.ocr_s, 0);
    assert.deepEqual(skips(job), [
      ["empty.txt", "empty"],
      ["scans/blank.png", "empty"],
    ]);
    assert.deepEqual([job.files_unchanged, job.files_added, job.files_changed, job.files_removed], [1, 0, 0, 0]);
    assert.deepEqual(await documentPaths(), ["notes.txt"], "a mark is never a document");
    const listed = await request("GET", "/collections", { token: owner.token });
    assert.equal(listed.body.find((c: { id: string }) => c.id === collection)?.document_count, 1, listed.text);
  });

  it("a changed file without text is read again, and then remembered as it is now", async () => {
    touch(blankPng, 5);
    const changed = await run();
    assert.equal(changed.bytes_processed, fs.statSync(blankPng).size, "only the changed picture is read");
    assert.deepEqual(skips(changed), [
      ["empty.txt", "empty"],
      ["scans/blank.png", "empty"],
    ]);
    const again = await run();
    assert.equal(again.bytes_processed, 0);
    assert.equal(again.timings.ocr_s, 0);
  });

  it("a file without text that gets text becomes a document, and is then unchanged like any other", async () => {
    fs.writeFileSync(emptyTxt, "Now the notes say where the puffins nest.");
    touch(emptyTxt, 10);
    const job = await run();
    assert.equal(job.files_added, 1);
    assert.equal(job.bytes_processed, fs.statSync(emptyTxt).size);
    assert.deepEqual(skips(job), [["scans/blank.png", "empty"]]);
    assert.deepEqual(await documentPaths(), ["empty.txt", "notes.txt"]);
    const hits = await request("GET", `/collections/${collection}/search?q=puffins`, { token: owner.token });
    assert.deepEqual(hits.body.results.map((h: { path: string }) => h.path), ["empty.txt"]);
    const again = await run();
    assert.deepEqual([again.files_unchanged, again.bytes_processed], [2, 0]);
  });

  it("a deleted file without text is not counted as removed, and its mark goes with it", async () => {
    const before = fs.statSync(blankPng);
    fs.rmSync(blankPng);
    const job = await run();
    assert.equal(job.files_removed, 0, "it was no document");
    assert.deepEqual(skips(job), []);
    assert.deepEqual(await documentPaths(), ["empty.txt", "notes.txt"]);
    // Back as it was (same size and time): had its mark stayed, it would be skipped unread.
    fs.writeFileSync(blankPng, BLANK_PAGE);
    fs.utimesSync(blankPng, before.atime, before.mtime);
    const back = await run();
    assert.equal(back.bytes_processed, before.size, "read again: nothing remembered it");
    assert.deepEqual(skips(back), [["scans/blank.png", "empty"]]);
  });
});
