/**
 * The web UI end to end: the real server (serving renderer/dist), a real Samba
 * server and headless Chromium driven by playwright-core. `npm test` builds the
 * renderer first (scripts/build-if-needed.js). Screenshots land in test/e2e/screenshots/.
 *
 * Each test stands alone (`--test-name-pattern` runs any one of them): it signs up its own
 * user in a browser context of its own and sets up through the API what its screens need (a
 * group, a source, an ingested collection, the model catalog). The servers are shared by the file.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, afterEach, before, test } from "node:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { launchChromium } from "../fixtures/chromium";
import { startFakeGoogle, type FakeGoogle } from "../fixtures/fake-google";
import { startFakeOllama, type FakeOllama } from "../fixtures/fake-ollama";
import { addSmbSource, client, GOOD_PASSWORD, type Request, uniqueEmail, waitForJobEnd } from "../fixtures/http-client";
import { startSamba, type SambaServer } from "../fixtures/samba";
import { startSluice, type SluiceServer } from "../fixtures/sluice-server";
import { JOB_WAIT_LIMIT_MS, WAIT_LIMIT_MS, waitFor } from "../fixtures/wait-for";
import { freePort } from "../fixtures/free-port";

const ROOT = path.resolve(__dirname, "..", "..", __filename.endsWith(".ts") ? "" : "..");
const SCREENSHOTS = path.join(ROOT, "test", "e2e", "screenshots");

let sluice: SluiceServer;
let samba: SambaServer;
let ollama: FakeOllama;
let google: FakeGoogle;
let browser: Browser;
/** The API as a script sees it (bearer tokens), for each test's set-up. */
let api: Request;

const SOURCE = "Team share";
const DRIVE_SOURCE = "Team drive";
const DRIVE_PHRASE = "the lighthouse keeper logs every ferry";
const VIEWPORT = { width: 1280, height: 860 };

/** A port picked up front, so PUBLIC_URL (the OAuth redirect URI) can name it. */

async function shot(page: Page, name: string): Promise<void> {
  // The header is sticky: from a scrolled page it would be drawn mid-way down a full-page shot.
  await page.evaluate("window.scrollTo(0, 0)");
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

before(async () => {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  // Enough extra files that the pipeline is still running when the page first polls it.
  const populate = (dir: string) => {
    fs.mkdirSync(path.join(dir, "archive"), { recursive: true });
    for (let i = 0; i < 400; i++) fs.writeFileSync(path.join(dir, "archive", `note-${i}.txt`), `Archived note number ${i}.\n`);
    // A long document: several of its chunks match the same word, so its result has several passages.
    fs.mkdirSync(path.join(dir, "manuals"), { recursive: true });
    const sections = Array.from({ length: 5 }, (_, i) =>
      [`## Part ${i + 1}`, ...Array.from({ length: 18 }, (_, j) => `Check mooring line ${i + 1}.${j + 1} at the pier before the tide turns.`)].join("\n\n"),
    );
    fs.writeFileSync(path.join(dir, "manuals", "harbour manual.md"), `${sections.join("\n\n")}\n`);
  };
  [ollama, google] = await Promise.all([startFakeOllama(), startFakeGoogle()]);
  const port = await freePort();
  const env = {
    ...google.env,
    PORT: String(port),
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    OLLAMA_HOST: ollama.url,
    SLUICE_PULL_RETRY_DELAY_MS: "10",
    SLUICE_SSE_KEEPALIVE_MS: "50",
  };
  [sluice, samba] = await Promise.all([startSluice({ env }), startSamba({ populate })]);
  api = client(sluice.api);
  // The server itself serves the built UI at /.
  const home = await fetch(`${sluice.url}/`);
  assert.match(home.headers.get("content-type") ?? "", /text\/html/, "the server does not serve renderer/dist at /");
  await home.arrayBuffer();
  browser = await launchChromium();
});

after(async () => {
  await browser?.close().catch(() => {});
  await Promise.all([sluice?.stop(), samba?.stop()]);
  await Promise.all([ollama?.close(), google?.close()]);
});

/** The browser contexts of the running test, closed after it. */
const contexts: BrowserContext[] = [];
/** Console messages of Content-Security-Policy violations, from every page of the running test. */
const cspViolations: string[] = [];

afterEach(async () => {
  await Promise.all(contexts.splice(0).map((ctx) => ctx.close().catch(() => {})));
  // Every screen a test showed keeps to the server's Content-Security-Policy (the Drive popup's too).
  const violations = cspViolations.splice(0);
  assert.deepEqual(violations, [], "a screen broke the server's Content-Security-Policy");
});

/** A new browser context, closed after the test; `init` runs before its first page opens. */
async function newPage(init?: (ctx: BrowserContext) => Promise<void>): Promise<Page> {
  const ctx = await browser.newContext({ viewport: VIEWPORT });
  contexts.push(ctx);
  // Chromium reports every Content-Security-Policy violation on the console.
  ctx.on("console", (message) => {
    if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
  });
  await init?.(ctx);
  const page = await ctx.newPage();
  // Only bounds a hang: an element that a busy machine shows late still comes long before this.
  page.setDefaultTimeout(WAIT_LIMIT_MS);
  return page;
}

interface SignedIn {
  page: Page;
  email: string;
  /** The same user's bearer token, for set-up through the API. */
  token: string;
}

/** A new context signed in as a new user (the session cookie is the browser's), on the app's first screen. */
async function signedIn(opts: { baseUrl?: string; init?: (ctx: BrowserContext) => Promise<void>; goto?: boolean } = {}): Promise<SignedIn> {
  const baseUrl = opts.baseUrl ?? sluice.url;
  const page = await newPage(opts.init);
  const email = uniqueEmail("e2e");
  const signup = await page.request.post(`${baseUrl}/api/signup`, { data: { email, password: GOOD_PASSWORD } });
  assert.ok(signup.ok(), await signup.text());
  const { access_token: token } = (await signup.json()) as { access_token: string };
  if (opts.goto !== false) await page.goto(baseUrl);
  return { page, email, token };
}

let names = 0;
/** A name no other test of this server uses. */
const unique = (prefix: string) => `${prefix}-${++names}`;

/** A group of the user's, made through the API: its id and name. */
async function newGroup(token: string): Promise<{ id: string; name: string }> {
  const name = unique("e2e-team");
  const res = await api("POST", "/user_groups", { token, body: { group_name: name, group_permission: "write" } });
  assert.equal(res.status, 201, res.text);
  return { id: res.body.created_group_id, name };
}

/** The test Samba server's share added as SOURCE to a new group of the user's; its pipeline has not run. */
async function smbSource(token: string) {
  const group = await newGroup(token);
  return { group, ...(await addSmbSource(api, token, group.id, samba, SOURCE)) };
}

/** smbSource, then its pipeline run to the end: a collection to search. */
async function ingestedSource(token: string) {
  const source = await smbSource(token);
  const run = await api("POST", `/data_pipelines/${source.pipeline.id}/ingest`, { token });
  assert.equal(run.status, 202, run.text);
  assert.equal((await waitForJobEnd(api, token, source.pipeline.id)).status, "completed");
  return source;
}

/** Opens the collection of the user's source named `name`, as a user gets there: Data sources, then its Collection link. */
async function openCollection(page: Page, name = SOURCE): Promise<void> {
  await page.getByRole("link", { name: "Data sources" }).click();
  await page.locator(`[aria-label="source ${name}"]`).getByRole("link", { name: "Collection" }).click();
  await page.getByLabel("Search this collection").waitFor();
}

/** Makes the server's model catalog hold exactly these models (pulled from the fake Ollama at once), whatever an earlier test left. */
async function catalog(token: string, models: string[]): Promise<void> {
  const held = (await api("GET", "/models", { token })).body as Array<{ id: string; model_name: string }>;
  const wanted = (held: string, name: string) => held === name || held === `${name}:latest`;
  for (const model of held) {
    if (models.some((name) => wanted(model.model_name, name))) continue;
    assert.equal((await api("DELETE", `/models/${model.id}`, { token })).status, 204, `removing ${model.model_name}`);
  }
  for (const name of models) {
    if (held.some((model) => wanted(model.model_name, name))) continue;
    const pulled = await api("POST", "/models", { token, body: { model_name: name } });
    assert.match(pulled.text, /"status":"completed"/, `pulling ${name}`);
  }
}

/** The browser's part of a Drive consent, done by a script: Google's fake approves at once and redirects to Sluice's callback. */
async function connectDrive(token: string): Promise<void> {
  const connect = await api("POST", `/integrations/cloud/drive/connect?return_to=${encodeURIComponent("/")}`, { token });
  assert.equal(connect.status, 200, connect.text);
  const authorize = await fetch(connect.body.auth_url, { redirect: "manual" });
  assert.equal(authorize.status, 302);
  const callback = await fetch(authorize.headers.get("location") ?? "", { redirect: "manual" });
  assert.equal(callback.status, 302, await callback.text());
}

let corpus: Promise<{ email: string; token: string }> | null = null;

/** One user's ingested SOURCE, made on first use and shared by the tests that only read it (search, ask). */
function sharedCorpus(): Promise<{ email: string; token: string }> {
  corpus ??= (async () => {
    const email = uniqueEmail("e2e-corpus");
    const signup = await api("POST", "/signup", { body: { email, password: GOOD_PASSWORD } });
    assert.equal(signup.status, 201, signup.text);
    await ingestedSource(signup.body.access_token);
    return { email, token: signup.body.access_token as string };
  })();
  return corpus;
}

/** A new context signed in as the shared corpus's user, on its collection's page. */
async function onCorpus(init?: (ctx: BrowserContext) => Promise<void>): Promise<SignedIn> {
  const { email, token } = await sharedCorpus();
  const page = await newPage(init);
  const signin = await page.request.post(`${sluice.url}/api/signin`, { data: { email, password: GOOD_PASSWORD } });
  assert.ok(signin.ok(), await signin.text());
  await page.goto(sluice.url);
  await openCollection(page);
  return { page, email, token };
}

test("sign up and see who I am", async () => {
  const page = await newPage();
  const EMAIL = uniqueEmail("e2e");
  await page.goto(sluice.url);
  await page.getByRole("tab", { name: "Sign up" }).click();
  await page.getByLabel("Email").fill(EMAIL);
  await page.getByLabel("Password").fill("short");
  await page.getByRole("button", { name: "Sign up", exact: true }).click();
  await page.getByText("Password must be at least 8 characters.").waitFor();
  await shot(page, "01-sign-up");
  await page.getByLabel("Password").fill(GOOD_PASSWORD);
  await page.getByRole("button", { name: "Sign up", exact: true }).click();
  await page.locator(".user-email", { hasText: EMAIL }).waitFor();
  await page.getByRole("navigation", { name: "Main" }).waitFor();
});

test("create a group, with the name rule shown inline", async () => {
  const { page, email: EMAIL } = await signedIn();
  const GROUP = unique("e2e-team");
  await page.getByRole("link", { name: "Groups" }).click();
  const name = page.getByLabel("Group name", { exact: true });
  await name.fill("ab");
  await page.getByText("Too short. Use 3 to 50 letters, digits, underscores (_) or hyphens (-), not used by another group.").waitFor();
  await name.fill("bad-name!");
  await page.getByText("“!” is not allowed. Use 3 to 50 letters, digits, underscores (_) or hyphens (-), not used by another group.").waitFor();
  await name.fill(GROUP);
  await page.getByRole("button", { name: "Create group" }).click();
  await page.locator(`[aria-label="group ${GROUP}"]`).waitFor();
  await page.locator(".tree", { hasText: GROUP }).waitFor();
  await page.locator(`[aria-label="group ${GROUP}"] .chip`, { hasText: EMAIL }).waitFor();
  await shot(page, "02-groups");
});

test("create a collection and see it listed with 0 documents", async () => {
  // The group first, then the page: opened before it, the page may read the groups before the
  // group exists, and clicking Collections on Collections reads nothing again.
  const { page, token } = await signedIn({ goto: false });
  await newGroup(token);
  const COLLECTION = unique("e2e_notes").replace("-", "_");
  await page.goto(sluice.url);
  await page.getByRole("link", { name: "Collections" }).click();
  await page.getByLabel("Name", { exact: true }).fill(COLLECTION);
  await page.getByRole("button", { name: "Create collection" }).click();
  const row = page.locator(`tr[aria-label="collection ${COLLECTION}"]`);
  await row.waitFor();
  assert.equal((await row.locator('td[data-label="Documents"]').textContent())?.trim(), "0");
  await shot(page, "03-collections");
});

test("add an SMB source: wrong password shown inline, then the right one", async () => {
  const { page, token } = await signedIn();
  await newGroup(token);
  await page.getByRole("link", { name: "Data sources" }).click();
  await page.getByRole("button", { name: "Add share" }).click();
  await page.getByText("Give the source a name.").waitFor();
  await page.getByLabel("Source name").fill(SOURCE);
  await page.getByLabel("Server name").fill("localhost");
  await page.getByLabel("IP address (optional)").fill("127.0.0.1");
  const port = page.getByLabel("Port", { exact: true });
  assert.equal(await port.inputValue(), "445");
  await port.fill(String(samba.port));
  await page.getByLabel("User name").fill(samba.username);
  await page.getByLabel("Password", { exact: true }).fill("wrong-password-1");
  await page.getByRole("button", { name: "Add share" }).click();
  const formError = page.locator("#smb-form-error");
  await formError.waitFor();
  assert.match((await formError.textContent()) ?? "", /Invalid SMB credentials.*See the note under Password/);
  // The hint sits on the field to fix, tied to it for screen readers.
  const password = page.getByLabel("Password", { exact: true });
  assert.equal(await password.getAttribute("aria-invalid"), "true");
  assert.match((await page.locator(`#${await password.getAttribute("aria-describedby")}`).textContent()) ?? "", /refused this user name or password/);
  await shot(page, "04-sources-invalid-credentials");

  // A closed port is a different problem, named on the Port field instead.
  await password.fill(samba.password);
  await port.fill("1");
  await page.getByRole("button", { name: "Add share" }).click();
  await formError.filter({ hasText: "See the note under Port" }).waitFor();
  assert.equal(await port.getAttribute("aria-invalid"), "true");
  assert.match((await page.locator("#smb-port-note").textContent()) ?? "", /refused the connection/);
  assert.equal(await password.getAttribute("aria-invalid"), null);
  await port.fill(String(samba.port));

  await page.getByLabel("Password", { exact: true }).fill(samba.password);
  await page.getByRole("button", { name: "Add share" }).click();
  await page.locator(`[aria-label="source ${SOURCE}"]`).waitFor();
  await page.getByRole("status").filter({ hasText: `Added ${SOURCE}` }).waitFor();
  assert.equal(await page.locator("#smb-form-error").count(), 0);
  await shot(page, "05-sources");
});

test("a group made after the page read the groups owns the next source: the form sends the group its select shows", async () => {
  const { page, token } = await signedIn();
  // The collections page has read the groups (none yet) when the group is made elsewhere: Data
  // sources then opens on that cached list, and the fresh one arrives a moment later.
  await page.getByText("Collections belong to a group.").waitFor();
  const group = await newGroup(token);
  await page.getByRole("link", { name: "Data sources" }).click();
  const form = page.getByRole("form", { name: "Add SMB share" });
  await form.waitFor();
  assert.equal(await form.getByLabel("Owner group").inputValue(), group.id);
  await form.getByLabel("Source name").fill(unique("Late group share"));
  await form.getByLabel("Server name").fill("localhost");
  await form.getByLabel("IP address (optional)").fill("127.0.0.1");
  await form.getByLabel("Port", { exact: true }).fill(String(samba.port));
  await form.getByLabel("User name").fill(samba.username);
  await form.getByLabel("Password", { exact: true }).fill("wrong-password-2");
  await form.getByRole("button", { name: "Add share" }).click();
  // The server answered (a group kept from the form's first render would stop it at "Choose the group").
  await page.locator("#smb-form-error").filter({ hasText: /Invalid SMB credentials/ }).waitFor();
  assert.equal(await form.getByLabel("Owner group").getAttribute("aria-invalid"), null);
});

test("browse the shares of the source", async () => {
  const { page, token } = await signedIn({ goto: false });
  await smbSource(token);
  await page.goto(sluice.url);
  await page.getByRole("link", { name: "Data sources" }).click();
  await page.locator(`[aria-label="source ${SOURCE}"]`).getByRole("link", { name: "Browse shares" }).click();
  const docs = page.locator('[aria-label="share docs"]');
  await docs.waitFor();
  await docs.getByText("readme.txt").waitFor();
  await docs.getByText("folder with spaces").waitFor();
  await shot(page, "06-share-browser");
});

test("run the auto-created pipeline and watch it reach 100%", async (t) => {
  const { page, token } = await signedIn({ goto: false });
  await smbSource(token);
  await page.goto(sluice.url);
  await page.getByRole("link", { name: "Pipelines" }).click();
  const card = page.locator(".pipeline").first();
  await card.getByText("Never run.", { exact: true }).waitFor();
  await card.getByRole("button", { name: "Run now" }).click();
  // Best effort: catch the live view while the job runs (it may finish first on a fast machine).
  const running = await card
    .locator('[data-job-status="processing"]')
    .waitFor({ timeout: 3_000 })
    .then(() => true)
    .catch(() => false);
  if (running) await shot(page, "07a-pipeline-running");
  else t.diagnostic("the job finished before the running state could be captured");
  await card.locator('[data-job-status="completed"]').waitFor({ timeout: JOB_WAIT_LIMIT_MS });
  assert.equal((await card.locator("[data-progress]").textContent())?.trim(), "100%");
  assert.equal(await card.getByRole("progressbar").getAttribute("aria-valuenow"), "100");
  const indexed = Number(await card.locator('[data-count="indexed"]').textContent());
  assert.ok(indexed > 0, "some files were indexed");
  // The state comes from the server: a reload still shows the finished job.
  await page.reload();
  await page.locator(".pipeline").first().locator('[data-job-status="completed"]').waitFor();
  await page.locator(".pipeline").first().getByText(/Job history \(1\)/).click();
  // The finished job says where its time went, stage by stage and by file type.
  const timings = (await page.locator(".pipeline").first().locator("[data-timings]").textContent()) ?? "";
  assert.match(timings, /Where the time went: listing \d+\.\d s · reading \d+\.\d s · parsing \d+\.\d s/);
  assert.match(timings, /by type: \w+ \d+ files?/);
  await shot(page, "07-pipelines");
});

test("schedule the pipeline: a bad cron pattern says what to fix, a good one previews its next three runs", async () => {
  const { page, token } = await signedIn({ goto: false });
  await smbSource(token);
  await page.goto(sluice.url);
  await page.getByRole("link", { name: "Pipelines" }).click();
  const card = page.locator(".pipeline").first();
  assert.equal((await card.locator("[data-pipeline-schedule]").textContent())?.trim(), "Not scheduled");
  await card.getByText("Schedule:").click();
  await card.getByLabel("Run").selectOption({ label: "Custom cron pattern" });
  const cron = card.getByLabel("Cron pattern (minute hour day-of-month month day-of-week)");
  await cron.fill("0 25 * * *");
  await card.getByText("Not a valid cron pattern: Invalid value for hour: 25").waitFor();
  assert.equal(await card.getByRole("button", { name: "Save schedule" }).isDisabled(), true);
  await cron.fill("30 2 * * 1-5");
  await card.getByLabel("Time zone (IANA name)").fill("Europe/Berlin");
  const runs = card.locator("[data-schedule-preview] li");
  await runs.nth(2).waitFor();
  const preview = await runs.allTextContents();
  assert.equal(preview.length, 3);
  for (const run of preview) assert.match(run, /^(Mon|Tue|Wed|Thu|Fri) \d{1,2} \w{3} \d{4}, 02:30 \(Europe\/Berlin\)$/);
  await shot(page, "07b-pipeline-schedule");
  // Keyboard only: the save button is reached and pressed from the keyboard.
  await card.getByRole("button", { name: "Save schedule" }).focus();
  await page.keyboard.press("Enter");
  await card.locator("[data-pipeline-schedule]", { hasText: "Cron 30 2 * * 1-5 (Europe/Berlin) · next run" }).waitFor();
  await card.getByRole("button", { name: "Pause schedule" }).click();
  await card.locator("[data-pipeline-schedule]", { hasText: "· paused" }).waitFor();
  await card.getByRole("button", { name: "Resume schedule" }).click();
  await card.locator("[data-pipeline-schedule]", { hasText: "· next run" }).waitFor();

  // The source's server goes down for maintenance: pause all its schedules from the source.
  await page.getByRole("link", { name: "Data sources" }).click();
  const source = page.locator(`[aria-label="source ${SOURCE}"]`);
  await source.getByRole("button", { name: "Pause all its schedules" }).click();
  await source.getByText("1 schedule paused.").waitFor();
  await page.getByRole("link", { name: "Pipelines" }).click();
  await page.locator(".pipeline").first().locator("[data-pipeline-schedule]", { hasText: "· paused" }).waitFor();
  await page.locator(".pipeline").first().getByText("Schedule:").click();
  await page.locator(".pipeline").first().getByRole("button", { name: "Remove schedule" }).click();
  await page.locator(".pipeline").first().locator("[data-pipeline-schedule]", { hasText: "Not scheduled" }).waitFor();
});

test("search the ingested collection and see a highlighted snippet with its path", async () => {
  const { page } = await onCorpus();
  await page.getByLabel("Search this collection").fill("two levels down");
  await page.getByRole("button", { name: "Search", exact: true }).click();
  const hit = page.locator(".result").first();
  await hit.waitFor();
  assert.match((await hit.locator(".result-location").textContent()) ?? "", /deep note\.txt/);
  assert.ok((await hit.locator(".snippet mark").count()) > 0, "the snippet highlights the match");
  await page.locator("#docs-heading", { hasText: /Documents \([1-9]\d*\)/ }).waitFor();
  await shot(page, "08-search");
});

test("search results: one per document with its best passages, its location copyable, a type filter, and a note when not every word was found", async () => {
  const { page } = await onCorpus();
  await page.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: sluice.url });
  const query = page.getByLabel("Search this collection");
  await query.fill("mooring");
  await page.getByRole("button", { name: "Search", exact: true }).click();
  await page.locator("#results-heading", { hasText: "1 result for “mooring”" }).waitFor();
  // The manual matches in each of its chunks, yet it is one result: its passages under its title.
  const manual = page.locator("article.result");
  assert.equal(await manual.count(), 1);
  assert.equal((await manual.locator("h4").textContent())?.trim(), "harbour manual");
  const passages = manual.locator(".passages li");
  assert.ok((await passages.count()) >= 2, `several passages of the manual (${await passages.count()})`);
  const texts = await passages.allTextContents();
  assert.equal(new Set(texts).size, texts.length, "each passage is its own text");
  for (let i = 0; i < texts.length; i++) assert.ok((await passages.nth(i).locator("mark").count()) > 0, `passage ${i} marks the word`);
  assert.equal((await manual.locator(".result-meta").textContent())?.replace(/\s+/g, " ").trim(), "MD in docs/manuals");

  // The location as the user knows it, both forms, each with its own Copy button.
  const unc = "\\\\localhost\\docs\\manuals\\harbour manual.md";
  const smbUrl = `smb://localhost:${samba.port}/docs/manuals/harbour%20manual.md`;
  const forms = manual.locator(".location-form");
  assert.deepEqual(await forms.locator("dt").allTextContents(), ["Windows path", "Mac and Linux address"]);
  assert.deepEqual(await forms.locator("code").allTextContents(), [unc, smbUrl]);
  const copyUnc = manual.getByRole("button", { name: "Copy Windows path of harbour manual" });
  assert.equal(await copyUnc.getAttribute("data-copy"), unc);
  await copyUnc.click();
  await manual.locator(`.copied[data-copied="${unc.replace(/\\/g, "\\\\")}"]`, { hasText: "Copied" }).waitFor();
  await page.locator("[data-announcer]", { hasText: "Copied the Windows path of harbour manual." }).waitFor({ state: "attached" });
  assert.equal(await page.evaluate("navigator.clipboard.readText()"), unc);
  await manual.getByRole("button", { name: "Copy Mac and Linux address of harbour manual" }).click();
  await manual.locator(`.copied[data-copied="${smbUrl}"]`).waitFor();
  assert.equal(await manual.locator(".copied").count(), 1, "one Copied at a time: the last one");
  assert.equal(await page.evaluate("navigator.clipboard.readText()"), smbUrl);
  // A browser has no desktop bridge: no Open button.
  assert.equal(await page.getByRole("button", { name: /^Open / }).count(), 0);
  await shot(page, "08b-search-documents");

  // The type filter narrows the same search, at once.
  await query.fill("2024");
  await page.getByRole("button", { name: "Search", exact: true }).click();
  await page.locator("#results-heading", { hasText: "2 results for “2024”" }).waitFor();
  assert.deepEqual((await page.locator("article.result h4").allTextContents()).sort(), ["budget", "plan"]);
  await page.getByLabel("File type").selectOption({ label: "Spreadsheets" });
  await page.locator("#results-heading", { hasText: "1 result for “2024” in Spreadsheets" }).waitFor();
  assert.deepEqual(await page.locator("article.result h4").allTextContents(), ["budget"]);
  // The folder filter, from a result's folder.
  await page.getByRole("button", { name: "Clear filters" }).click();
  await page.locator("#results-heading", { hasText: "2 results for “2024”" }).waitFor();
  await page.locator("article.result").first().getByRole("button", { name: "Only results in folder docs/projects/2024" }).click();
  await page.locator("#results-heading", { hasText: "2 results for “2024” under docs/projects/2024" }).waitFor();
  assert.equal(await page.getByLabel("Folder", { exact: true }).inputValue(), "docs/projects/2024");
  await page.getByLabel("Folder", { exact: true }).fill("docs/manuals");
  await page.getByLabel("Folder", { exact: true }).press("Enter");
  await page.locator("#results-heading", { hasText: "No matches for “2024” under docs/manuals." }).waitFor();
  await page.getByRole("button", { name: "Clear filters" }).click();

  // A word no document has: the answer says it shows any of the words.
  assert.equal(await page.locator("[data-matched]").count(), 0);
  await query.fill("mooring zqxjvw");
  await page.getByRole("button", { name: "Search", exact: true }).click();
  const note = page.locator('[data-matched="any"]');
  await note.waitFor();
  assert.equal((await note.textContent())?.trim(), "No document has all of these words. Showing results for any of: “mooring” or “zqxjvw”.");
  await page.locator("[data-announcer]", { hasText: "1 result for mooring zqxjvw. Not every word was found" }).waitFor({ state: "attached" });
  await shot(page, "08c-search-any-words");
});

test("search results on the desktop app: Open hands the shown location to the bridge and shows what it answers", async () => {
  // What main/preload.ts exposes in the desktop app; main's own checks are tested in test/integration/desktop-shell.test.ts.
  const { page: desktop } = await onCorpus(async (ctx) => {
    await ctx.addInitScript(`
      window.opened = [];
      window.sluiceDesktop = {
        openLocation: async (location) => {
          window.opened.push(location);
          return window.opened.length === 1 ? null : "This computer cannot reach that file.";
        },
      };
    `);
  });
  {
    await desktop.getByLabel("Search this collection").fill("mooring");
    await desktop.getByRole("button", { name: "Search", exact: true }).click();
    const open = desktop.getByRole("button", { name: "Open harbour manual" });
    await open.click();
    await desktop.waitForFunction("window.opened.length === 1");
    assert.deepEqual(await desktop.evaluate("window.opened[0]"), {
      path: "\\\\localhost\\docs\\manuals\\harbour manual.md",
      url: `smb://localhost:${samba.port}/docs/manuals/harbour%20manual.md`,
    });
    assert.equal(await desktop.locator("article.result").getByRole("alert").count(), 0);
    await open.click();
    await desktop.locator("article.result").getByRole("alert").filter({ hasText: "This computer cannot reach that file." }).waitFor();
    await desktop.screenshot({ path: path.join(SCREENSHOTS, "08d-search-open-desktop.png") });
  }
});

test("ask: before any model is pulled, the Ask view says so and links to Models", async () => {
  const { token } = await sharedCorpus();
  await catalog(token, []);
  const { page } = await onCorpus();
  await page.getByRole("link", { name: "Ask this collection" }).click();
  await page.getByRole("heading", { level: 1, name: /^Ask / }).waitFor();
  const notice = page.getByTestId("no-model");
  await notice.waitFor();
  assert.ok(await notice.getByRole("link", { name: /Models screen/ }).isVisible());
  assert.ok(await page.getByRole("button", { name: "Ask", exact: true }).isDisabled());
});

test("ask: with only an embedding model in the catalog, the notice says why; at 640x400 (200 % zoom) its link is reached by keyboard", async () => {
  const { token } = await sharedCorpus();
  await catalog(token, ["nomic-embed-text"]);
  const { page } = await onCorpus();
  await page.getByRole("link", { name: "Ask this collection" }).click();
  const held = (await (await page.request.get(`${sluice.url}/api/models`)).json()) as Array<{ id: string; model_name: string }>;
  const embedding = held.find((m) => m.model_name.startsWith("nomic-embed-text"));
  assert.ok(embedding, "the embedding model is in the catalog");
  await page.setViewportSize({ width: 640, height: 400 });
  try {
    await page.reload();
    const heading = page.getByRole("heading", { level: 1, name: /^Ask / });
    await heading.waitFor();
    await page.getByTestId("no-model").getByText("The catalog holds only embedding models, which cannot write answers.").waitFor();
    assert.ok(await page.getByRole("button", { name: "Ask", exact: true }).isDisabled());
    // Nothing scrolls sideways at 200 % zoom.
    assert.ok(await page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), "the Ask view scrolls sideways at 640 px");
    // From the heading (where the view puts focus), Tab reaches the notice's link before anything below it.
    await heading.focus();
    let focused = "";
    for (let i = 0; i < 8 && !/Models screen/.test(focused); i++) {
      await page.keyboard.press("Tab");
      focused = (await page.evaluate("document.activeElement?.textContent ?? ''")) as string;
    }
    assert.equal(focused, "Pull a chat model on the Models screen");
    await shot(page, "08e-ask-only-embedding-models-640");
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "Catalog" }).waitFor();
  } finally {
    await page.setViewportSize(VIEWPORT);
  }
});

test("a group that owns a source cannot be deleted; the 409 detail is shown", async () => {
  const { page, token } = await signedIn({ goto: false });
  const { group } = await smbSource(token);
  await page.goto(sluice.url);
  await page.getByRole("link", { name: "Groups" }).click();
  const card = page.locator(`[aria-label="group ${group.name}"]`);
  await card.getByRole("button", { name: "Delete group" }).click();
  await card.getByRole("button", { name: "Yes, delete" }).click();
  const alert = card.getByRole("alert");
  await alert.waitFor();
  assert.match((await alert.textContent()) ?? "", new RegExp(SOURCE));
  await shot(page, "09-groups-delete-conflict");
});

test("models: the server's status, then a pull followed next to its button: %, speed and time left; layers folded", async () => {
  const { page, token } = await signedIn({ goto: false });
  await catalog(token, []);
  await page.goto(sluice.url);
  await page.getByRole("link", { name: "Models" }).click();
  await page.getByRole("heading", { name: "Catalog" }).waitFor();
  await page.getByRole("heading", { name: "My models" }).waitFor();
  await page.getByText("No models pulled yet.").waitFor();
  // Before anyone pulls, the page says whether the model server answers.
  await page.locator('[data-model-server="up"]', { hasText: "The model server is running (Ollama 0.12.6)." }).waitFor();
  await shot(page, "10-models-empty");

  // Typed, not pasted: results follow the keystrokes, and a typo still finds the model.
  const search = page.getByLabel("Search the public library");
  await search.pressSequentially("mistrl", { delay: 40 });
  const first = page.locator(".library-item").first();
  await first.locator("strong", { hasText: /^mistral$/ }).waitFor();
  await first.getByRole("button", { name: "Pull mistral:7b" }).waitFor();
  await shot(page, "11-models-library-search");

  await search.fill("");
  await search.pressSequentially("smollm2", { delay: 20 });
  // Slow lines so the live progress can be seen.
  ollama.lineDelayMs = 150;
  const upstreamBefore = ollama.pullCount("smollm2:135m");
  const button = page.getByRole("button", { name: "Pull smollm2:135m" });
  await button.click();
  // The progress is in the same library entry as the button that started it, right under it.
  const item = page.locator(".library-item", { has: button });
  const pull = item.getByRole("group", { name: "Pull of smollm2:135m" });
  const overall = pull.getByRole("progressbar", { name: "Download of smollm2:135m" });
  await overall.waitFor();
  const [buttonBox, pullBox] = [await button.boundingBox(), await pull.boundingBox()];
  assert.ok(buttonBox && pullBox && pullBox.y - (buttonBox.y + buttonBox.height) < 60, `${JSON.stringify(buttonBox)} ${JSON.stringify(pullBox)}`);
  // Focus moves to the one thing that can be done now.
  await pull.locator("button:focus", { hasText: "Cancel pull" }).waitFor();
  const figures = pull.locator(".pull-figures");
  await figures.filter({ hasText: /^\d+% · [\d.]+ MB of [\d.]+ MB · [\d.]+ (KB|MB|GB)\/s · about \d+ (s|min) left$/ }).waitFor();
  // Screenshots during the pull, at a desktop size and a small window.
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.screenshot({ path: "/tmp/sluice-models-pull-1280x800.png" });
  await page.setViewportSize({ width: 640, height: 400 });
  await pull.scrollIntoViewIfNeeded();
  await page.screenshot({ path: "/tmp/sluice-models-pull-640x400.png" });
  await page.setViewportSize({ width: 1280, height: 860 });
  // Layers are folded under the overall bar.
  const layers = pull.getByRole("progressbar", { name: /^Layer / });
  assert.equal(await layers.first().isVisible(), false, "layers start folded");
  await pull.getByText("2 layers").click();
  await layers.first().waitFor();
  assert.equal(await layers.count(), 2, "one bar per layer of smollm2:135m");
  await shot(page, "12-models-pulling");
  // The progress is not a live region: only the outcome is announced.
  assert.equal(await page.locator("[aria-live]", { has: overall }).count(), 0);

  const done = pull.getByRole("status").filter({ hasText: "smollm2:135m is in the catalog" });
  await done.waitFor();
  ollama.lineDelayMs = 0;
  assert.match((await done.textContent()) ?? "", /\d+(\.\d)? tokens\/s/);
  assert.equal(await pull.getByRole("alert").count(), 0);
  assert.equal(ollama.pullCount("smollm2:135m"), upstreamBefore + 1);

  const row = page.locator("tr", { has: page.locator("th", { hasText: "smollm2:135m" }) });
  await row.waitFor();
  assert.match((await row.locator("td.num").first().textContent()) ?? "", /^\d+(\.\d)?$/, "the catalog shows tokens/s");
  await shot(page, "13-models-pulled");
});

test("models: pulling a model that is there says so and downloads nothing; a pull can be cancelled", async () => {
  const { page, token } = await signedIn({ goto: false });
  await catalog(token, ["smollm2:135m"]);
  await page.goto(sluice.url);
  await page.getByRole("link", { name: "Models" }).click();
  await page.getByLabel("Search the public library").pressSequentially("smollm2", { delay: 20 });
  const upstreamBefore = ollama.pullCount("smollm2:135m");
  await page.getByRole("button", { name: "Pull smollm2:135m" }).click();
  const pull = page.getByRole("group", { name: "Pull of smollm2:135m" });
  await pull.getByRole("status").filter({ hasText: "smollm2:135m is already in the catalog, so nothing was downloaded." }).waitFor();
  assert.equal(ollama.pullCount("smollm2:135m"), upstreamBefore, "nothing was downloaded");
  await pull.getByRole("button", { name: "Check for a newer version" }).waitFor();

  const search = page.getByLabel("Search the public library");
  await search.fill("");
  await search.pressSequentially("qwen2.5-coder", { delay: 20 });
  ollama.lineDelayMs = 150;
  const abortedBefore = ollama.abortedPulls("qwen2.5-coder:7b");
  const button = page.getByRole("button", { name: "Pull qwen2.5-coder:7b" });
  await button.click();
  const qwen = page.getByRole("group", { name: "Pull of qwen2.5-coder:7b" });
  await qwen.locator(".pull-figures", { hasText: "%" }).waitFor();
  await qwen.getByRole("button", { name: "Cancel pull of qwen2.5-coder:7b" }).click();
  await qwen.getByRole("status").filter({ hasText: "Pull cancelled. Pulling it again later picks up where it stopped." }).waitFor();
  ollama.lineDelayMs = 0;
  // Focus goes back to the button that started it.
  await page.locator("#pull-qwen2_5-coder_7b:focus").waitFor();
  assert.equal(await qwen.getByRole("progressbar").count(), 0);
  await waitFor(() => ollama.abortedPulls("qwen2.5-coder:7b") > abortedBefore, "the fake Ollama to see the download stopped");
  assert.equal(ollama.abortedPulls("qwen2.5-coder:7b"), abortedBefore + 1, "the download stopped once");
  assert.equal(await page.locator("tr", { has: page.locator("th", { hasText: "qwen2.5-coder:7b" }) }).count(), 0);
  await shot(page, "13b-models-cancelled");
});

test("models: add to my models with hardware notes, edit the notes, remove it", async () => {
  const { page, token } = await signedIn({ goto: false });
  await catalog(token, ["smollm2:135m"]);
  await page.goto(sluice.url);
  await page.getByRole("link", { name: "Models" }).click();
  const row = page.locator("tr", { has: page.locator("th", { hasText: "smollm2:135m" }) });
  await row.getByRole("button", { name: "Add to my models", exact: true }).click();
  const form = page.getByRole("form", { name: "Add to my models" });
  // The catalog button picks the model in the form and moves focus to its notes.
  await form.locator("#my-notes:focus").waitFor();
  assert.equal(await form.getByLabel("Model from the catalog").inputValue(), "smollm2:135m");
  await form.getByLabel("Hardware notes").fill("Laptop, 8 GB RAM: fast enough");
  // The form's own button has its own name, not the catalog row's.
  assert.equal(await page.getByRole("button", { name: "Save to my models" }).count(), 1);
  await form.getByRole("button", { name: "Save to my models" }).click();
  const mine = page.locator(".my-model", { hasText: "smollm2:135m" });
  await mine.getByText("Laptop, 8 GB RAM: fast enough").waitFor();

  await mine.getByRole("button", { name: "Edit notes" }).click();
  await mine.getByLabel("Hardware notes").fill("Desktop with RTX 3060: 60+ tokens/s");
  await mine.getByRole("button", { name: "Save" }).click();
  await mine.getByText("Desktop with RTX 3060: 60+ tokens/s").waitFor();
  await shot(page, "14-my-models");

  await mine.getByRole("button", { name: "Remove" }).click();
  await mine.getByRole("button", { name: "Yes, remove" }).click();
  await page.getByText("Your personal list is empty.").waitFor();
  const res = await page.request.get(`${sluice.url}/api/models/my`);
  assert.deepEqual(await res.json(), []);
});

test("ask: pick a model, watch the answer stream in, open a cited passage, stop, delete the conversation", async () => {
  const { token } = await sharedCorpus();
  await catalog(token, ["smollm2:135m"]);
  const { page } = await onCorpus();
  await page.getByRole("link", { name: "Ask this collection" }).click();
  const model = page.getByLabel("Model");
  await model.locator("option", { hasText: /smollm2:135m · \d+(\.\d)? tokens\/s/ }).waitFor({ state: "attached" });
  const region = page.getByTestId("answer-region");
  assert.equal(await region.getAttribute("aria-live"), "polite");
  ollama.chatDelayMs = 40;
  await page.getByRole("textbox", { name: "Question" }).fill("two levels down");
  await page.getByRole("button", { name: "Ask", exact: true }).click();
  // While tokens arrive the region is busy, so screen readers wait for the whole answer.
  await page.locator('[data-testid="answer-region"][aria-busy="true"]').waitFor();
  const citation = region.getByRole("button", { name: /^Source 1: / });
  await citation.waitFor();
  await page.locator('[data-testid="answer-region"][aria-busy="false"]').waitFor();
  await citation.click();
  const cited = page.getByTestId("cited-source");
  await cited.waitFor();
  assert.match((await cited.locator(".result-path").textContent()) ?? "", /deep note\.txt/);
  await shot(page, "14a-ask-answer");
  const conversations = page.locator("section", { has: page.locator("#conversations-heading") });
  await conversations.getByRole("button", { name: "two levels down" }).waitFor();

  // Stop: the answer ends where it was, marked stopped.
  ollama.chatDelayMs = 300;
  await page.getByRole("textbox", { name: "Question" }).fill("and the memo?");
  await page.getByRole("button", { name: "Ask", exact: true }).click();
  await page.getByRole("button", { name: "Stop" }).click();
  await region.getByText("Stopped.").waitFor();
  ollama.chatDelayMs = 0;

  await conversations.getByRole("button", { name: "Delete" }).first().click();
  await page.getByRole("button", { name: "Yes, delete" }).click();
  await conversations.getByText("No conversations yet.").waitFor();
});

test("ask: with the model server down, the Ask view says so", async () => {
  const { token } = await sharedCorpus();
  await catalog(token, ["smollm2:135m"]);
  const { page } = await onCorpus();
  await page.getByRole("link", { name: "Ask this collection" }).click();
  await page.getByRole("heading", { level: 1, name: /^Ask / }).waitFor();
  ollama.refuseConnections = true;
  ollama.dropConnections();
  try {
    await page.reload();
    await page.getByTestId("model-server-down").waitFor();
    await shot(page, "14b-ask-model-server-down");
  } finally {
    ollama.refuseConnections = false;
  }
});

test("search by meaning: a chat model is refused on the field, an embedding model is set, the search offers its modes, then it is turned off", async () => {
  const { page, token } = await signedIn({ goto: false });
  await Promise.all([catalog(token, ["smollm2:135m"]), ingestedSource(token)]);
  await page.goto(sluice.url);
  const pulled = await page.request.post(`${sluice.url}/api/models`, { data: { model_name: "nomic-embed-text" } });
  assert.match(await pulled.text(), /"status":"completed"/);
  await openCollection(page);
  const collectionId = decodeURIComponent(new URL(page.url()).hash.split("/")[2]);
  const control = page.locator("section", { has: page.getByRole("heading", { name: "Search by meaning" }) });
  await control.getByText("Embedding model: none").waitFor();
  assert.equal(await page.getByLabel("Search mode").count(), 0, "no mode to pick without an embedding model");

  // A chat model: the server's 400 detail is shown on the field, which is marked invalid.
  const field = control.getByLabel("Embedding model", { exact: true });
  await field.selectOption("smollm2:135m");
  await control.getByRole("button", { name: "Save" }).click();
  await control.locator('select[aria-invalid="true"]').waitFor();
  const note = page.locator(`#${await field.getAttribute("aria-describedby")}`);
  assert.match((await note.textContent()) ?? "", /cannot embed/);
  await control.getByText("Embedding model: none").waitFor();

  // An embedding model, chosen with the keyboard: set, announced, and the search offers its modes.
  await field.focus();
  await field.selectOption("nomic-embed-text:latest");
  assert.equal(await field.getAttribute("aria-invalid"), null, "a new choice clears the refusal");
  await control.getByRole("button", { name: "Save" }).press("Enter");
  await control.getByText("Embedding model: nomic-embed-text:latest").waitFor();
  const mode = page.getByLabel("Search mode");
  await mode.waitFor();
  assert.equal(await mode.inputValue(), "hybrid");
  // The job started by the change embeds the collection; semantic search answers once it has.
  await waitFor(async () => {
    const res = await page.request.get(`${sluice.url}/api/collections/${collectionId}/search?q=${encodeURIComponent("two levels down")}&mode=semantic`);
    return res.ok() && ((await res.json()) as { results: unknown[] }).results.length > 0;
  }, "the job started by the change to embed the collection (a semantic search with results)");
  await mode.selectOption("semantic");
  await page.getByLabel("Search this collection").fill("two levels down");
  const searched = page.waitForRequest((req) => req.url().includes("/search?") && req.url().includes("mode=semantic"));
  await page.getByRole("button", { name: "Search", exact: true }).click();
  await searched;
  await page.locator(".result").first().waitFor();
  await shot(page, "14c-search-by-meaning");

  await field.selectOption("");
  await control.getByRole("button", { name: "Turn off" }).click();
  await control.getByText("Embedding model: none").waitFor();
  await page.getByLabel("Search mode").waitFor({ state: "detached" });
});

test("ask: an embedding model in the catalog is not offered as a model to answer with", async () => {
  const { token } = await sharedCorpus();
  await catalog(token, ["smollm2:135m", "nomic-embed-text"]);
  const { page } = await onCorpus();
  await page.getByRole("link", { name: "Ask this collection" }).click();
  const picker = page.getByLabel("Model", { exact: true });
  await picker.locator("option", { hasText: "smollm2:135m" }).waitFor({ state: "attached" });
  const offered = await picker.locator("option").allTextContents();
  assert.ok(!offered.some((o) => o.startsWith("nomic-embed-text")), `offered: ${offered.join(" | ")}`);
});

test("Google Drive: connect in a popup, add a source, ingest what I granted", async () => {
  const { page, token } = await signedIn({ goto: false });
  await newGroup(token);
  // Nothing shared with Sluice yet, whatever an earlier test granted.
  google.files.clear();
  await page.goto(sluice.url);
  await page.getByRole("link", { name: "Data sources" }).click();
  const card = page.locator("section", { has: page.locator("#drive-heading") });
  await card.locator('[data-drive="disconnected"]').waitFor();
  await shot(page, "15-drive-disconnected");

  const popupOpened = page.waitForEvent("popup");
  await card.getByRole("button", { name: "Connect Google Drive" }).click();
  const popup = await popupOpened;
  // The fake Google approves at once and redirects back; the page polls until connected, then closes the popup.
  await card.locator('[data-drive="connected"]').waitFor();
  assert.match((await card.textContent()) ?? "", new RegExp(google.account.email.replace(/\./g, "\\.")));
  if (!popup.isClosed()) await popup.waitForEvent("close", { timeout: WAIT_LIMIT_MS });
  await shot(page, "16-drive-connected");

  await page.getByLabel("Drive source name").fill(DRIVE_SOURCE);
  await page.getByRole("button", { name: "Add drive source" }).click();
  const row = page.locator(`[aria-label="source ${DRIVE_SOURCE}"]`);
  await row.waitFor();
  assert.match((await row.locator(".badge").first().textContent()) ?? "", /drive/);

  // Nothing shared with Sluice yet: the 409 detail is shown.
  await row.getByRole("button", { name: "Ingest everything I granted" }).click();
  const conflict = row.getByRole("alert");
  await conflict.waitFor();
  assert.match((await conflict.textContent()) ?? "", /covers no files/);
  await shot(page, "17a-drive-nothing-granted");

  // An id Google does not know: the 422 field error names it.
  await row.getByLabel("Drive file ids").fill("NoSuchFile123");
  await row.getByRole("button", { name: "Add files by id" }).click();
  const refused = row.getByRole("alert").filter({ hasText: "NoSuchFile123" });
  await refused.waitFor();
  await shot(page, "17-drive-errors");

  const doc = google.addFile("Harbour log", "application/vnd.google-apps.document", `Harbour log.\nEvery evening ${DRIVE_PHRASE} in the big book.\n`);
  google.addFile("Crew list", "application/vnd.google-apps.spreadsheet", "name,role\nAda,captain\nBo,engineer\n");
  await row.getByLabel("Drive file ids").fill(doc.id);
  await row.getByRole("button", { name: "Add files by id" }).click();
  await row.getByRole("status").filter({ hasText: "1 new file registered" }).waitFor();
  await row.getByRole("button", { name: "Ingest everything I granted" }).click();
  await row.getByRole("status").filter({ hasText: "1 new file registered (2 in total)" }).waitFor();
  assert.equal(await row.getByRole("alert").count(), 0);

  await row.getByRole("button", { name: "Check picker access" }).click();
  await row.getByText(/Picker access is ready/).waitFor();
  await shot(page, "18-drive-source");

  // "Run it now" starts the run and opens the pipeline: no second click.
  await page.getByRole("status").filter({ hasText: `Added ${DRIVE_SOURCE}` }).getByRole("button", { name: "Run it now" }).click();
  const pipeline = page.locator(".pipeline.focused");
  await pipeline.locator('[data-job-status="completed"]').waitFor();
  assert.equal(Number(await pipeline.locator('[data-count="indexed"]').textContent()), 2);
  await shot(page, "19-drive-pipeline");
});

test("Google Drive: search a phrase from a drive file", async () => {
  const { page, token } = await signedIn({ goto: false });
  const group = await newGroup(token);
  await connectDrive(token);
  const created = await api("POST", "/data_sources/drive/", { token, body: { data_source: { data_source_name: DRIVE_SOURCE, owner_group_id: group.id } } });
  assert.equal(created.status, 201, created.text);
  const doc = google.addFile("Harbour log", "application/vnd.google-apps.document", `Harbour log.\nEvery evening ${DRIVE_PHRASE} in the big book.\n`);
  const sheet = google.addFile("Crew list", "application/vnd.google-apps.spreadsheet", "name,role\nAda,captain\nBo,engineer\n");
  const files = await api("POST", `/data_sources/drive/${created.body.data_source.id}/files`, { token, body: { file_ids: [doc.id, sheet.id] } });
  assert.ok(files.status < 300, files.text);
  assert.equal((await api("POST", `/data_pipelines/${created.body.pipeline.id}/ingest`, { token })).status, 202);
  assert.equal((await waitForJobEnd(api, token, created.body.pipeline.id)).status, "completed");
  await page.goto(sluice.url);

  await openCollection(page, DRIVE_SOURCE);
  await page.getByLabel("Search this collection").fill("lighthouse keeper");
  await page.getByRole("button", { name: "Search", exact: true }).click();
  const hit = page.locator(".result").first();
  await hit.waitFor();
  assert.match((await hit.textContent()) ?? "", /Harbour log/);
  assert.ok((await hit.locator(".snippet mark").count()) > 0, "the snippet highlights the match");
  await page.locator(".doc-title", { hasText: "Crew list" }).waitFor();
  await shot(page, "20-drive-search");
});

test("disconnect Google Drive", async () => {
  const { page, token } = await signedIn({ goto: false });
  await connectDrive(token);
  const revokedBefore = google.revoked().length;
  await page.goto(sluice.url);
  await page.getByRole("link", { name: "Data sources" }).click();
  const card = page.locator("section", { has: page.locator("#drive-heading") });
  await card.getByRole("button", { name: "Disconnect" }).click();
  await card.locator('[data-drive="disconnected"]').waitFor();
  assert.ok(google.revoked().length > revokedBefore, "the grant was revoked at Google");
});

test("sign out", async () => {
  const { page } = await signedIn();
  await page.getByRole("button", { name: "Sign out" }).click();
  await page.getByRole("tabpanel", { name: "Sign in" }).waitFor();
  const me = await page.request.get(`${sluice.url}/api/users/me`);
  assert.equal(me.status(), 401);
  await shot(page, "30-signed-out");
});

// Each test's screens are checked against it as the test ends (afterEach).
test("the server sends a Content-Security-Policy that allows only its own scripts", async () => {
  const res = await fetch(sluice.url);
  await res.arrayBuffer();
  assert.match(res.headers.get("content-security-policy") ?? "", /script-src 'self'/);
});

/** signedIn for the side flows below, on any server: the context (closed after the test) and its page. */
async function signedInPage(baseUrl: string, init?: (ctx: BrowserContext) => Promise<void>): Promise<{ ctx: BrowserContext; p: Page }> {
  const { page } = await signedIn({ baseUrl, init, goto: false });
  return { ctx: page.context(), p: page };
}

test("Google Drive in the desktop app: consent in the system browser, the page polls until connected", async () => {
  const opened: string[] = [];
  const { ctx, p } = await signedInPage(sluice.url, async (c) => {
    // The desktop preload's openExternal, with Node's fetch as the system browser (it follows Google's redirects back to Sluice).
    await c.exposeFunction("__systemBrowser", async (url: string) => {
      opened.push(url);
      setTimeout(() => void fetch(url).then((r) => r.arrayBuffer()), 300);
    });
    await c.addInitScript("window.sluiceDesktop = { openExternal: (url) => window.__systemBrowser(url) };");
  });
  try {
    let popups = 0;
    p.on("popup", () => popups++);
    await p.goto(`${sluice.url}/#/sources`);
    const card = p.locator("section", { has: p.locator("#drive-heading") });
    await card.getByRole("button", { name: "Connect Google Drive" }).click();
    await card.locator('[data-drive="connected"]').waitFor();
    assert.equal(opened.length, 1);
    assert.equal(new URL(opened[0]).origin, new URL(google.env.GOOGLE_AUTH_URL).origin);
    assert.equal(popups, 0, "no popup in the desktop app");
    await card.getByRole("button", { name: "Disconnect" }).click();
    await card.locator('[data-drive="disconnected"]').waitFor();
  } finally {
    await ctx.close();
  }
});

test("without Google configured, the Drive card tells the desktop user which settings turn it on, and shows no Drive buttons", async () => {
  const bare = await startSluice();
  const { ctx, p } = await signedInPage(bare.url);
  try {
    await p.goto(`${bare.url}/#/sources`);
    const card = p.locator("section", { has: p.locator("#drive-heading") });
    await card.locator('[data-drive="unavailable"]', { hasText: "GOOGLE_CLIENT_ID" }).waitFor();
    assert.equal(await card.getByRole("button").count(), 0);
    assert.equal(await p.getByRole("button", { name: "Add drive source" }).count(), 0);
    await p.evaluate("window.scrollTo(0, 0)");
    await p.screenshot({ path: path.join(SCREENSHOTS, "21-drive-not-configured.png"), fullPage: true });
  } finally {
    await ctx.close();
    await bare.stop();
  }
});

test("with the model server stopped, the Models page says so in the viewer's words before anyone pulls", async () => {
  // Port 9 on loopback: nothing listens there, like an Ollama that is not running.
  const stopped = await startSluice({ env: { OLLAMA_HOST: "http://127.0.0.1:9", SLUICE_PULL_RETRY_DELAY_MS: "10" } });
  // The first account administers the instance: the member below is someone else.
  await client(stopped.api)("POST", "/signup", { body: { email: uniqueEmail("e2e-admin"), password: GOOD_PASSWORD } });
  const lan = await signedInPage(stopped.url);
  const desktop = await signedInPage(stopped.url, async (c) => {
    await c.addInitScript("window.sluiceDesktop = { openExternal: async () => {} };");
  });
  try {
    // A browser user on another machine cannot start it: they are told whom to ask, and no setting names. This
    // browser is on loopback, so the server's answer for a LAN peer (test/unit/instance-settings.test.ts) is given here.
    await lan.p.route("**/api/instance", (route) => route.fulfill({ json: { can_change_settings: false } }));
    await lan.p.goto(`${stopped.url}/#/models`);
    const banner = lan.p.locator('[data-model-server="down"]');
    await banner.getByText("The model server is not running, so models cannot be pulled or used. Ask your administrator to start it.").waitFor();
    assert.equal(await banner.getAttribute("role"), "alert");
    await lan.p.evaluate("window.scrollTo(0, 0)");
    await lan.p.screenshot({ path: path.join(SCREENSHOTS, "15-models-server-down.png"), fullPage: true });
    // A pull anyway: the one problem is still said once, in the banner, not again in the pull.
    await lan.p.getByLabel("Search the public library").fill("tinyllama");
    await lan.p.getByRole("button", { name: "Pull tinyllama:1.1b" }).click();
    await lan.p.getByRole("button", { name: "Pull tinyllama:1.1b" }).and(lan.p.locator(":enabled")).waitFor();
    assert.equal(await lan.p.getByRole("group", { name: "Pull of tinyllama:1.1b" }).getByRole("alert").count(), 0);
    assert.equal(await lan.p.getByRole("alert").count(), 1);
    // biome-ignore lint/performance/useDomNodeTextContent: Playwright's innerText() is the text as shown, which is what is checked
    assert.doesNotMatch(await lan.p.locator("main, body").first().innerText(), /OLLAMA_HOST|127\.0\.0\.1:9/);

    // The desktop user runs the model server on this computer.
    await desktop.p.goto(`${stopped.url}/#/models`);
    await desktop.p.locator('[data-model-server="down"]', { hasText: "The model server is not running. Start Ollama on this computer, then try again." }).waitFor();
  } finally {
    await lan.ctx.close();
    await desktop.ctx.close();
    await stopped.stop();
  }
});

test("the Models page at 640x400: nothing cut off, the catalog's rows stacked with every action in reach", async () => {
  const { page: p, token } = await signedIn({ goto: false });
  await catalog(token, ["smollm2:135m"]);
  {
    await p.setViewportSize({ width: 640, height: 400 });
    await p.goto(`${sluice.url}/#/models`);
    const row = p.locator("tr", { has: p.locator("th", { hasText: "smollm2:135m" }) });
    await row.waitFor();
    // Nothing wider than the window: no sideways scrolling needed to reach a button.
    const overflow = await p.evaluate("document.documentElement.scrollWidth - window.innerWidth");
    assert.ok(Number(overflow) <= 0, `the page is ${overflow}px wider than the window`);
    for (const name of ["Add to my models", "Delete"]) {
      const box = await row.getByRole("button", { name, exact: true }).boundingBox();
      assert.ok(box && box.x >= 0 && box.x + box.width <= 640, `${name}: ${JSON.stringify(box)}`);
    }
    await p.screenshot({ path: "/tmp/sluice-models-640x400-full.png", fullPage: true });
  }
});
