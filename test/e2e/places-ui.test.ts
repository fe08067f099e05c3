/**
 * Where a passage is in its document, as a person sees it (issue 35 item 3): a folder source of a
 * several-page text PDF, a one-page scan, a deck and a workbook, ingested by the real server (OCR
 * by the machine's Tesseract), searched in headless Chromium. Each result says its place ("p. 3",
 * "from a scan", "slide 2", "sheet Budget"), the desktop's Open is handed the PDF hit's page, and
 * the ask view's citations say the page. Stands alone: its own server, source and browser.
 * Screenshots land in test/e2e/screenshots/.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { after, afterEach, before, test } from "node:test";
import { PDFDocument } from "pdf-lib";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { axe } from "../fixtures/axe";
import { launchChromium } from "../fixtures/chromium";
import { fillerParagraph, makePdf, makePptx, makeXlsx } from "../fixtures/documents";
import { startFakeOllama, type FakeOllama } from "../fixtures/fake-ollama";
import { client, createGroup, signUp, type Request, waitForJobEnd } from "../fixtures/http-client";
import { imageOnlyPdf, renderPages, scanned } from "../fixtures/scans";
import { startSluice, tempDir, type SluiceServer } from "../fixtures/sluice-server";
import { JOB_WAIT_LIMIT_MS, WAIT_LIMIT_MS } from "../fixtures/wait-for";

const ROOT = path.resolve(__dirname, "..", "..", __filename.endsWith(".ts") ? "" : "..");
const SCREENSHOTS = path.join(ROOT, "test", "e2e", "screenshots");
const SMALL = { width: 640, height: 400 };
const LARGE = { width: 1280, height: 800 };

/** One word for each place, found in no other file of the source. */
const PDF_WORD = "albatross";
const SCAN_WORD = "cormorant";
const SLIDE_WORD = "quokka";
const SHEET_WORD = "pelican";

const root = fs.realpathSync(tempDir("sluice-places-root-"));
const library = path.join(root, "library");
const manual = path.join(library, "manual.pdf");
let sluice: SluiceServer;
let ollama: FakeOllama;
let browser: Browser;
let api: Request;
let owner: { email: string; token: string };
let collectionId = "";

/** Each paragraph list on a page of its own, the pages bound into one PDF. */
async function pagedPdf(pages: string[][]): Promise<Uint8Array> {
  const out = await PDFDocument.create();
  for (const paragraphs of pages) {
    const single = await PDFDocument.load(await makePdf(paragraphs));
    assert.equal(single.getPageCount(), 1, "each page's text fits on one page");
    const [page] = await out.copyPages(single, [0]);
    out.addPage(page);
  }
  return out.save();
}

before(async () => {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  // Page 3's word comes after more than a chunk's length (1,000 characters) of page 3's own text,
  // so the chunk holding it starts on page 3 (a passage over two pages says the first).
  const filler = (seed: number) => [fillerParagraph(seed), fillerParagraph(seed + 1), fillerParagraph(seed + 2)];
  fs.mkdirSync(library, { recursive: true });
  fs.writeFileSync(manual, await pagedPdf([filler(1), filler(10), [...filler(20), `The ${PDF_WORD} nests on the third page only.`], filler(30)]));
  // One page, drawn at a scanner's resolution, turned and speckled: seconds of OCR.
  const [picture] = await renderPages(await makePdf([`Harbour log. The ${SCAN_WORD} came back to the pier at dawn and stayed all day.`]), 200);
  fs.writeFileSync(path.join(library, "harbour log.pdf"), await imageOnlyPdf([scanned(picture, { degrees: 0.8, seed: 3 })]));
  fs.writeFileSync(path.join(library, "census.pptx"), makePptx([["Agenda for the year"], [`The ${SLIDE_WORD} census by island`]]));
  fs.writeFileSync(path.join(library, "accounts.xlsx"), makeXlsx({ Inventory: [["rope", 3]], Budget: [[`${SHEET_WORD} feed`, 120]] }));

  ollama = await startFakeOllama();
  [sluice, browser] = await Promise.all([startSluice({ env: { FOLDER_SOURCE_ROOTS: root, OCR: "on", OLLAMA_HOST: ollama.url } }), launchChromium()]);
  api = client(sluice.api);
  owner = await signUp(api, "places");
  const group = await createGroup(api, owner.token);
  const created = await api("POST", `/data_sources/folder/${group}`, {
    token: owner.token,
    body: { data_source: { data_source_name: "Field notes" }, folder_source: { path: library } },
  });
  assert.equal(created.status, 201, created.text);
  collectionId = created.body.pipeline.collection_id;
  assert.equal((await api("POST", `/data_pipelines/${created.body.pipeline.id}/ingest`, { token: owner.token })).status, 202);
  const job = await waitForJobEnd(api, owner.token, created.body.pipeline.id, JOB_WAIT_LIMIT_MS);
  assert.equal(job.status, "completed", JSON.stringify(job));
  assert.equal(job.entities_failed, 0, JSON.stringify(job.errors));
});

after(async () => {
  await browser?.close().catch(() => {});
  await sluice?.stop();
  await ollama?.close();
  fs.rmSync(root, { recursive: true, force: true });
});

const contexts: BrowserContext[] = [];
afterEach(async () => {
  await Promise.all(contexts.splice(0).map((ctx) => ctx.close().catch(() => {})));
});

/** Signed in as the owner, on the collection's page; `init` runs before the page opens (the desktop bridge's stub). */
async function onCollection(opts: { viewport?: { width: number; height: number }; init?: string } = {}): Promise<Page> {
  // bypassCSP: axe is injected as a script, which the app's CSP forbids.
  const ctx = await browser.newContext({ viewport: opts.viewport ?? LARGE, bypassCSP: true });
  contexts.push(ctx);
  if (opts.init) await ctx.addInitScript(opts.init);
  const page = await ctx.newPage();
  page.setDefaultTimeout(WAIT_LIMIT_MS);
  const signin = await page.request.post(`${sluice.url}/api/signin`, { data: { email: owner.email, password: "correct-horse-42" } });
  assert.ok(signin.ok(), await signin.text());
  await page.goto(`${sluice.url}/#/collections/${collectionId}`);
  await page.getByLabel("Search this collection").waitFor();
  return page;
}

async function search(page: Page, q: string): Promise<void> {
  await page.getByLabel("Search this collection").fill(q);
  await page.getByRole("button", { name: "Search", exact: true }).click();
  await page.locator("#results-heading", { hasText: `for “${q}”` }).waitFor();
}

/** The one result's title and the place each of its passages shows, as text a person reads. */
async function shownPlaces(page: Page): Promise<{ title: string; places: string[] }> {
  const results = page.locator("article.result");
  assert.equal(await results.count(), 1, "one document has the word");
  const title = ((await results.locator("h4").textContent()) ?? "").trim();
  return { title, places: (await results.locator(".passage-place").allTextContents()).map((t) => t.trim()) };
}

async function shot(page: Page, name: string): Promise<void> {
  await page.evaluate("window.scrollTo(0, 0)");
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

test("each result shows where its passage is: p. 3, from a scan, slide 2, sheet Budget", async () => {
  const page = await onCollection();
  const expected: Array<[string, string, string[]]> = [
    [PDF_WORD, "manual", ["p. 3"]],
    [SCAN_WORD, "harbour log", ["p. 1, from a scan"]],
    [SLIDE_WORD, "census", ["slide 2"]],
    [SHEET_WORD, "accounts", ["sheet Budget"]],
  ];
  for (const [word, title, places] of expected) {
    await search(page, word);
    assert.deepEqual(await shownPlaces(page), { title, places }, word);
    // The place is text beside the snippet, not only a colour or an icon.
    assert.ok(await page.locator("article.result .passage-place").first().isVisible(), `${word}: the place is visible`);
  }
  await search(page, PDF_WORD);
  await axe(page, "a result with its page");
  await shot(page, "places-01-search-page-1280");
  await search(page, SCAN_WORD);
  await axe(page, "a result from a scan");
  await shot(page, "places-02-search-scan-1280");
});

test("at 640x400 (200 % zoom) the place stays whole and on screen, and nothing scrolls sideways", async () => {
  const page = await onCollection({ viewport: SMALL });
  for (const [word, place] of [
    [SCAN_WORD, "p. 1, from a scan"],
    [SHEET_WORD, "sheet Budget"],
  ]) {
    await search(page, word);
    const label = page.locator("article.result .passage-place").first();
    assert.equal(((await label.textContent()) ?? "").trim(), place);
    const box = await label.boundingBox();
    assert.ok(box && box.x >= 0 && box.x + box.width <= SMALL.width, `${word}: the place is inside the window (${JSON.stringify(box)})`);
    assert.ok(await page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), `${word}: the results scroll sideways at 640 px`);
    await axe(page, `a result at 640 px (${word})`);
  }
  await search(page, SCAN_WORD);
  await page.locator("article.result").first().scrollIntoViewIfNeeded();
  await page.screenshot({ path: path.join(SCREENSHOTS, "places-03-search-scan-640.png") });
});

test("on the desktop app, Open is reached by Tab and hands the bridge the PDF hit's page", async () => {
  const page = await onCollection({
    init: `
      window.opened = [];
      window.sluiceDesktop = { openLocation: async (location, page) => { window.opened.push({ location, page }); return null; } };
    `,
  });
  await search(page, PDF_WORD);
  // From the result (arrow keys and Tab reach it), Tab goes on to its Open button.
  const result = page.locator("article.result").first();
  await result.focus();
  let focused = "";
  for (let i = 0; i < 12 && focused !== "Open manual"; i++) {
    await page.keyboard.press("Tab");
    focused = (await page.evaluate("document.activeElement?.getAttribute('aria-label') ?? ''")) as string;
  }
  assert.equal(focused, "Open manual", "Tab reaches the result's Open button");
  await page.keyboard.press("Enter");
  await page.waitForFunction("window.opened.length === 1");
  assert.deepEqual(await page.evaluate("window.opened[0]"), { location: { path: manual, url: pathToFileURL(manual).href }, page: 3 });
  await axe(page, "a result with its Open button");
  await shot(page, "places-04-search-open-desktop-1280");
});

test("ask: the citations and the cited passage say the page", async () => {
  const pulled = await api("POST", "/models", { token: owner.token, body: { model_name: "smollm2:135m" } });
  assert.match(pulled.text, /"status":"completed"/, pulled.text);
  const page = await onCollection();
  await page.getByRole("link", { name: "Ask this collection" }).click();
  await page.getByLabel("Model").locator("option", { hasText: "smollm2:135m" }).waitFor({ state: "attached" });
  await page.getByRole("textbox", { name: "Question" }).fill(`Where does the ${PDF_WORD} nest?`);
  await page.getByRole("button", { name: "Ask", exact: true }).click();
  const region = page.getByTestId("answer-region");
  const citation = region.getByRole("button", { name: "Source 1, p. 3: manual" });
  await citation.waitFor();
  await page.locator('[data-testid="answer-region"][aria-busy="false"]').waitFor();
  assert.equal(((await citation.textContent()) ?? "").trim(), "[1, p. 3]");
  await citation.click();
  const cited = page.getByTestId("cited-source");
  await cited.waitFor();
  assert.match((await cited.locator("strong").textContent()) ?? "", /^\[1\] manual \(p\. 3\)$/);
  await axe(page, "an answer with a cited page");
  await shot(page, "places-05-ask-page-1280");

  // A slide is cited as a slide, not as a page.
  await page.getByRole("textbox", { name: "Question" }).fill(`How many ${SLIDE_WORD}?`);
  await page.getByRole("button", { name: "Ask", exact: true }).click();
  const slide = region.getByRole("button", { name: "Source 1, slide 2: census" });
  await slide.waitFor();
  assert.equal(((await slide.textContent()) ?? "").trim(), "[1, slide 2]");
  await page.setViewportSize(SMALL);
  assert.ok(await page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), "the answer scrolls sideways at 640 px");
  await slide.scrollIntoViewIfNeeded();
  await page.screenshot({ path: path.join(SCREENSHOTS, "places-06-ask-slide-640.png") });

  // A conversation opened again from the list cites the same places: they are stored with its turns.
  await page.setViewportSize(LARGE);
  await page.getByRole("button", { name: "New conversation" }).click();
  await page.locator("#answer-heading", { hasText: "New conversation" }).waitFor();
  await page.getByRole("button", { name: `Where does the ${PDF_WORD} nest?` }).click();
  await region.getByRole("button", { name: "Source 1, p. 3: manual" }).waitFor();
  await region.getByRole("button", { name: "Source 1, slide 2: census" }).waitFor();
});
