// npm test: once
// Why: OCR and the readers run alike on every back end; indexing and search on PostgreSQL are re-run by ingestion.test and search-results.test.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { extractText } from "../../server/ingest/parse/extract-text";
import { OCR_OFF } from "../../server/ingest/parse/ocr/ocr-settings";
import { makePptx, makeXlsx } from "../fixtures/documents";
import { client, createGroup, signUp, waitForJobEnd, type Request } from "../fixtures/http-client";
import { band, imageOnlyPdf, mixedPdf, realDocumentPdf, renderPages, scanned, toPng, toTiff, wordsOf } from "../fixtures/scans";
import { childrenNamed } from "../fixtures/processes";
import { startSluice, tempDir, type SluiceServer } from "../fixtures/sluice-server";
import { waitFor } from "../fixtures/wait-for";

// Scans in a folder source (issue 35): the user guide set as a five-page PDF, drawn at 200 dpi,
// each page turned a little and speckled, saved as an image-only PDF with a scanner's stamp; a
// two-frame fax (TIFF); a PDF of one text page and one scanned page; a photo (PNG); a picture
// that cannot be read; a deck and a workbook. Then search finds the words of each page, and
// says which page; OCR=off skips what needs OCR.
const root = fs.realpathSync(tempDir("sluice-ocr-root-"));
const library = path.join(root, "library");
const offLibrary = path.join(root, "off");
const longLibrary = path.join(root, "long");
let server: SluiceServer;
let request: Request;
let owner: { email: string; token: string };
let collection = "";
let pipeline = "";
let firstJob: Record<string, any>;
/** Words only page 3 of the scan has, from its second half (a chunk that starts on page 2 does not reach them). */
let page3Words: string[] = [];
/** Words of the fax's second frame, the mixed PDF's text page and its scanned page. */
let faxWords: string[] = [];
let textPageWords: string[] = [];
let scannedPageWords: string[] = [];
/** A generous bound for ingesting a dozen scanned pages on a loaded machine (waitFor still ends as soon as the job does). */
const OCR_JOB_LIMIT_MS = 20 * 60_000;

function write(file: string, bytes: Uint8Array | string) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, bytes);
}

/**
 * Words of `page` (0-based) no other page of `pages` has, from `from` to `to` (shares of its
 * text): far enough in that a chunk starting on the page before (at most 1,000 characters)
 * cannot reach them, since such a chunk says the page before.
 */
function onlyOn(pages: string[], page: number, from = 0, to = 1, min = 8): string[] {
  const text = pages[page];
  // Nor earlier on the page itself ("match" near its top is within reach of such a chunk).
  const before = text.slice(0, Math.floor(text.length * from));
  const others = new Set([...pages.flatMap((other, i) => (i === page ? [] : [...wordsOf(other, min)])), ...wordsOf(before, min)]);
  return [...wordsOf(text.slice(Math.floor(text.length * from), Math.floor(text.length * to)), min)].filter((word) => !others.has(word));
}

async function pageTexts(pdf: Uint8Array): Promise<string[]> {
  return (await extractText("source.pdf", pdf)).segments!.map((segment) => segment.text);
}

async function ingest(pipelineId: string): Promise<Record<string, any>> {
  assert.equal((await request("POST", `/data_pipelines/${pipelineId}/ingest`, { token: owner.token })).status, 202);
  return waitForJobEnd(request, owner.token, pipelineId, OCR_JOB_LIMIT_MS);
}

/** The hits with the words in the very form asked (not only a word of the same stem: "integrations" also finds "integrity"). */
async function search(collectionId: string, q: string) {
  const res = await request("GET", `/collections/${collectionId}/search?q=${encodeURIComponent(q)}&top_k=20`, { token: owner.token });
  assert.equal(res.status, 200, res.text);
  return (res.body.results as Array<Record<string, any>>).filter((hit) => hit.exact || res.body.matched === "any");
}

async function addFolder(group: string, folder: string, name: string) {
  const created = await request("POST", `/data_sources/folder/${group}`, { token: owner.token, body: { data_source: { data_source_name: name }, folder_source: { path: folder } } });
  assert.equal(created.status, 201, created.text);
  return created.body.pipeline as { id: string; collection_id: string };
}

before(async () => {
  const guide = await realDocumentPdf(5);
  const guidePages = await pageTexts(guide);
  page3Words = onlyOn(guidePages, 2, 0.4);
  const scans = (await renderPages(guide, 200)).map((page, i) => scanned(page, { degrees: i % 2 ? -1.2 : 0.9, seed: i + 11 }));
  write(path.join(library, "scans", "scan-0041.pdf"), await imageOnlyPdf(scans, { stamp: "Scanned with ScanStation 3000" }));
  // Long enough (four times the five pages) that a cancel comes while it is read, however fast the machine.
  write(path.join(longLibrary, "scan-0042.pdf"), await imageOnlyPdf([...scans, ...scans, ...scans, ...scans]));

  const later = await realDocumentPdf(3, 30);
  const laterPages = await pageTexts(later);
  const laterScans = (await renderPages(later, 200)).map((page, i) => band(scanned(page, { seed: i + 21 }), 0.05, 0.5));
  // The bands hold about the first 45 % of each page's text.
  faxWords = onlyOn(laterPages, 1, 0.36, 0.46, 5);
  write(path.join(library, "faxes", "fax.tiff"), toTiff([laterScans[0], laterScans[1]]));
  // Page 3 of `later` as a text page, a band of page 1 of `later` as a scanned one.
  write(path.join(library, "mixed", "mixed.pdf"), await mixedPdf(later, [2], [laterScans[0]]));
  textPageWords = onlyOn(laterPages, 2).slice(0, 8);
  scannedPageWords = onlyOn(laterPages, 0, 0.36, 0.46, 5);
  write(path.join(library, "photos", "whiteboard.png"), toPng(laterScans[1]));
  write(path.join(library, "broken", "torn.png"), toPng(laterScans[2]).slice(0, 4000));
  write(path.join(library, "decks", "deck.pptx"), makePptx([["Agenda"], ["The second slide names the quokka census"]]));
  write(path.join(library, "books", "book.xlsx"), makeXlsx({ Inventory: [["rope", 3]], Budget: [["quokka feed", 120]] }));
  // A slide that names the quokka, after one that does not: a chunk is one slide's.

  write(path.join(offLibrary, "whiteboard.png"), toPng(laterScans[1]));
  write(path.join(offLibrary, "scan.pdf"), await imageOnlyPdf([laterScans[0]]));
  write(path.join(offLibrary, "mixed.pdf"), await mixedPdf(later, [2], [laterScans[0]]));

  server = await startSluice({ env: { FOLDER_SOURCE_ROOTS: root } });
  request = client(server.api);
  owner = await signUp(request, "ocr-owner");
  const group = await createGroup(request, owner.token);
  const created = await addFolder(group, library, "Scans");
  collection = created.collection_id;
  pipeline = created.id;
  firstJob = await ingest(pipeline);
});
after(async () => {
  if (server && server.child.exitCode === null) await server.stop();
  fs.rmSync(root, { recursive: true, force: true });
});

describe("ingesting scans", () => {
  it("completes with the picture that cannot be read as its one failed file, with the reason", () => {
    assert.equal(firstJob.status, "completed", JSON.stringify(firstJob));
    assert.equal(firstJob.entities_failed, 1, JSON.stringify(firstJob.errors));
    assert.equal(firstJob.errors[0].entity, "broken/torn.png");
    assert.match(firstJob.errors[0].message, /^OCR could not read the image: /);
    assert.equal(firstJob.files_added, 6, JSON.stringify(firstJob));
    assert.ok(firstJob.timings.ocr_s > 0, `OCR has its own stage time: ${JSON.stringify(firstJob.timings)}`);
  });

  it("finds the words of page 3 of a five-page scan, and each hit says page 3, from a scan", async () => {
    assert.ok(page3Words.length >= 8, `page 3 has words of its own: ${page3Words}`);
    const found: string[] = [];
    for (const word of page3Words) {
      const hits = (await search(collection, word)).filter((hit) => hit.path.endsWith("scan-0041.pdf"));
      if (hits.length === 0) continue;
      found.push(word);
      for (const hit of hits) assert.deepEqual([hit.page, hit.location_label, hit.from_scan], [3, "page 3", true], `${word}: ${JSON.stringify(hit)}`);
    }
    assert.ok(found.length >= page3Words.length * 0.9, `found ${found.length} of ${page3Words.length}: missing ${page3Words.filter((w) => !found.includes(w))}`);
  });

  it("reads each frame of a fax as a page", async () => {
    assert.ok(faxWords.length >= 3, String(faxWords));
    const pages = new Set<number>();
    for (const word of faxWords) for (const hit of await search(collection, word)) if (hit.path.endsWith("fax.tiff")) pages.add(hit.page);
    assert.deepEqual([...pages], [2]);
  });

  it("in a mixed PDF, keeps the text page's own text and reads the scanned page", async () => {
    const text = new Set<string>();
    for (const word of textPageWords) for (const hit of await search(collection, word)) if (hit.path.endsWith("mixed.pdf")) text.add(`${hit.page} ${hit.from_scan}`);
    assert.deepEqual([...text], ["1 false"]);
    const scan = new Set<string>();
    for (const word of scannedPageWords) for (const hit of await search(collection, word)) if (hit.path.endsWith("mixed.pdf")) scan.add(`${hit.page} ${hit.from_scan}`);
    assert.deepEqual([...scan], ["2 true"]);
  });

  it("a photo is found from a scan with no page; a slide and a sheet say where they are", async () => {
    const photo = (await search(collection, faxWords.join(" "))).filter((hit) => hit.path.endsWith("whiteboard.png"));
    assert.ok(photo.length > 0 && photo.every((hit) => hit.page === null && hit.location_label === null && hit.from_scan));
    const quokka = await search(collection, "quokka");
    assert.deepEqual(quokka.map((hit) => [hit.path.split("/").pop(), hit.page, hit.location_label, hit.from_scan]).sort(), [
      ["book.xlsx", null, "sheet Budget", false],
      ["deck.pptx", 2, "slide 2", false],
    ]);
    const grouped = await request("GET", `/collections/${collection}/search?q=quokka&group_by=document`, { token: owner.token });
    assert.ok(grouped.body.documents.every((d: { passages: Array<{ location_label: string }> }) => d.passages.every((p) => p.location_label)));
  });

  it("a job cancelled while it reads a long scan ends, and leaves no tesseract process running", { skip: process.platform !== "linux" && "reads /proc" }, async () => {
    const group = await createGroup(request, owner.token);
    const long = await addFolder(group, longLibrary, "A long scan");
    assert.equal((await request("POST", `/data_pipelines/${long.id}/ingest`, { token: owner.token })).status, 202);
    const serverPid = server.child.pid!;
    await waitFor(() => childrenNamed(serverPid, "tesseract").length > 0, "a tesseract process reading a page of the long scan");
    const cancel = await request("POST", `/data_pipelines/${long.id}/ingest/cancel`, { token: owner.token });
    assert.equal(cancel.status, 202, cancel.text);
    const done = await waitForJobEnd(request, owner.token, long.id);
    assert.equal(done.error_message, `Cancelled by ${owner.email}`, JSON.stringify(done));
    assert.equal(done.files_added, 0, "the scan's parse stopped with the job, not read to its end");
    await waitFor(() => childrenNamed(serverPid, "tesseract").length === 0, () => `no tesseract process left: ${childrenNamed(serverPid, "tesseract")}`);
  });

  it("a run with nothing changed reads no file again: no OCR", async () => {
    const again = await ingest(pipeline);
    assert.equal(again.status, "completed", JSON.stringify(again));
    assert.equal(again.files_unchanged, 6);
    assert.equal(again.timings.ocr_s, 0);
  });
});

describe("OCR=off", () => {
  it("skips pictures and image-only PDFs for that reason; a mixed PDF keeps its text page", async () => {
    await server.stop();
    server = await startSluice({ env: { FOLDER_SOURCE_ROOTS: root, OCR: "off" }, dataDir: server.dataDir });
    request = client(server.api);
    const group = await createGroup(request, owner.token);
    const off = await addFolder(group, offLibrary, "Scans, OCR off");
    const job = await ingest(off.id);
    assert.equal(job.status, "completed", JSON.stringify(job));
    assert.deepEqual(job.skipped.map((s: { entity: string; reason: string }) => [s.entity, s.reason]).sort(), [
      ["scan.pdf", OCR_OFF],
      ["whiteboard.png", OCR_OFF],
    ]);
    assert.equal(job.files_added, 1);
    const hits = (await search(off.collection_id, textPageWords.join(" "))).filter((hit) => hit.path.endsWith("mixed.pdf"));
    assert.ok(hits.length > 0 && hits.every((hit) => hit.page === 1 && !hit.from_scan));
    assert.equal(job.timings.ocr_s, 0);
  });
});
