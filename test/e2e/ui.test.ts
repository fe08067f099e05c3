/**
 * The web UI end to end: the real server (serving renderer/dist), a real Samba
 * server and headless Chromium driven by playwright-core. `npm test` builds the
 * renderer first (scripts/build-if-needed.js). Screenshots land in test/e2e/screenshots/.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, test } from "node:test";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { startSamba, type SambaServer } from "../fixtures/samba";
import { startSluice, type SluiceServer } from "../fixtures/sluice-server";

const ROOT = path.resolve(__dirname, "..", "..", __filename.endsWith(".ts") ? "" : "..");
const SCREENSHOTS = path.join(ROOT, "test", "e2e", "screenshots");
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

let sluice: SluiceServer;
let samba: SambaServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;

const EMAIL = `e2e-${Date.now()}@example.com`;
const PASSWORD = "e2e-Passw0rd";
const GROUP = "e2e-team";
const COLLECTION = "e2e_notes";
const SOURCE = "Team share";

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

before(async () => {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  // Enough extra files that the pipeline is still running when the page first polls it.
  const populate = (dir: string) => {
    fs.mkdirSync(path.join(dir, "archive"), { recursive: true });
    for (let i = 0; i < 400; i++) fs.writeFileSync(path.join(dir, "archive", `note-${i}.txt`), `Archived note number ${i}.\n`);
  };
  [sluice, samba] = await Promise.all([startSluice(), startSamba({ populate })]);
  // The server itself serves the built UI at /.
  const home = await fetch(`${sluice.url}/`);
  assert.match(home.headers.get("content-type") ?? "", /text\/html/, "the server does not serve renderer/dist at /");
  await home.arrayBuffer();
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  page = await context.newPage();
  page.setDefaultTimeout(15_000);
});

after(async () => {
  await context?.close().catch(() => {});
  await browser?.close().catch(() => {});
  await Promise.all([sluice?.stop(), samba?.stop()]);
});

test("the web UI, from sign-up to search and sign-out", async (t) => {
  await t.test("sign up and see who I am", async () => {
    await page.goto(sluice.url);
    await page.getByRole("tab", { name: "Sign up" }).click();
    await page.getByLabel("Email").fill(EMAIL);
    await page.getByLabel("Password").fill("short");
    await page.getByRole("button", { name: "Sign up", exact: true }).click();
    await page.getByText("Password must be at least 8 characters.").waitFor();
    await shot("01-sign-up");
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign up", exact: true }).click();
    await page.locator(".user-email", { hasText: EMAIL }).waitFor();
    await page.getByRole("navigation", { name: "Main" }).waitFor();
  });

  await t.test("create a group, with the name rule shown inline", async () => {
    await page.getByRole("link", { name: "Groups" }).click();
    const name = page.getByLabel("Group name", { exact: true });
    await name.fill("ab");
    await page.getByText("Use at least 3 characters.").waitFor();
    await name.fill("bad name!");
    await page.getByText("Use only letters, digits, underscores and hyphens.").waitFor();
    await name.fill(GROUP);
    await page.getByRole("button", { name: "Create group" }).click();
    await page.locator(`[aria-label="group ${GROUP}"]`).waitFor();
    await page.locator(".tree", { hasText: GROUP }).waitFor();
    await page.locator(`[aria-label="group ${GROUP}"] .chip`, { hasText: EMAIL }).waitFor();
    await shot("02-groups");
  });

  await t.test("create a collection and see it listed with 0 documents", async () => {
    await page.getByRole("link", { name: "Collections" }).click();
    await page.getByLabel("Name", { exact: true }).fill(COLLECTION);
    await page.getByRole("button", { name: "Create collection" }).click();
    const row = page.locator(`tr[aria-label="collection ${COLLECTION}"]`);
    await row.waitFor();
    assert.equal((await row.locator('td[data-label="documents"]').textContent())?.trim(), "0");
    await shot("03-collections");
  });

  await t.test("add an SMB source: wrong password shown inline, then the right one", async () => {
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
    await formError.waitFor({ timeout: 30_000 });
    assert.match((await formError.textContent()) ?? "", /Invalid SMB credentials/);
    await shot("04-sources-invalid-credentials");

    await page.getByLabel("Password", { exact: true }).fill(samba.password);
    await page.getByRole("button", { name: "Add share" }).click();
    await page.locator(`[aria-label="source ${SOURCE}"]`).waitFor({ timeout: 30_000 });
    await page.getByRole("status").filter({ hasText: `Added ${SOURCE}` }).waitFor();
    assert.equal(await page.locator("#smb-form-error").count(), 0);
    await shot("05-sources");
  });

  await t.test("browse the shares of the source", async () => {
    await page.locator(`[aria-label="source ${SOURCE}"]`).getByRole("link", { name: "Browse shares" }).click();
    const docs = page.locator('[aria-label="share docs"]');
    await docs.waitFor({ timeout: 30_000 });
    await docs.getByText("readme.txt").waitFor();
    await docs.getByText("folder with spaces").waitFor();
    await shot("06-share-browser");
  });

  await t.test("run the auto-created pipeline and watch it reach 100%", async () => {
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
    if (running) await shot("07a-pipeline-running");
    else t.diagnostic("the job finished before the running state could be captured");
    await card.locator('[data-job-status="completed"]').waitFor({ timeout: 60_000 });
    assert.equal((await card.locator("[data-progress]").textContent())?.trim(), "100%");
    assert.equal(await card.getByRole("progressbar").getAttribute("aria-valuenow"), "100");
    const processed = Number(await card.locator('[data-count="processed"]').textContent());
    assert.ok(processed > 0, "some files were processed");
    // The state comes from the server: a reload still shows the finished job.
    await page.reload();
    await page.locator(".pipeline").first().locator('[data-job-status="completed"]').waitFor();
    await page.locator(".pipeline").first().getByText(/Job history \(1\)/).click();
    await shot("07-pipelines");
  });

  await t.test("search the ingested collection and see a highlighted snippet with its path", async () => {
    await page.getByRole("link", { name: "Data sources" }).click();
    await page.locator(`[aria-label="source ${SOURCE}"]`).getByRole("link", { name: "Collection" }).click();
    await page.getByLabel("Search this collection").fill("two levels down");
    await page.getByRole("button", { name: "Search", exact: true }).click();
    const hit = page.locator(".result").first();
    await hit.waitFor();
    assert.match((await hit.locator(".result-path").textContent()) ?? "", /deep note\.txt/);
    assert.ok((await hit.locator(".snippet mark").count()) > 0, "the snippet highlights the match");
    await page.locator("#docs-heading", { hasText: /Documents \([1-9]\d*\)/ }).waitFor();
    await shot("08-search");
  });

  await t.test("a group that owns a source cannot be deleted; the 409 detail is shown", async () => {
    await page.getByRole("link", { name: "Groups" }).click();
    const card = page.locator(`[aria-label="group ${GROUP}"]`);
    await card.getByRole("button", { name: "Delete group" }).click();
    await card.getByRole("button", { name: "Yes, delete" }).click();
    const alert = card.getByRole("alert");
    await alert.waitFor();
    assert.match((await alert.textContent()) ?? "", new RegExp(SOURCE));
    await shot("09-groups-delete-conflict");
  });

  await t.test("models", async (tt) => {
    const res = await page.request.get(`${sluice.url}/api/models`);
    if (res.status() !== 200) {
      tt.skip("models API not available");
      return;
    }
    await page.getByRole("link", { name: "Models" }).click();
    await page.getByRole("heading", { name: "Catalog" }).waitFor();
    await page.getByRole("heading", { name: "My models" }).waitFor();
    await shot("10-models");
  });

  await t.test("sign out", async () => {
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("tabpanel", { name: "Sign in" }).waitFor();
    const me = await page.request.get(`${sluice.url}/api/users/me`);
    assert.equal(me.status(), 401);
    await shot("11-signed-out");
  });
});
