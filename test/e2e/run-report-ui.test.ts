/**
 * Run reports in Chromium (issue 21): what a user sees after a run with errors and skipped files,
 * an unchanged re-run, a long run (percentage, pace, "Run it now" from the Sources page, cancel),
 * and a failed run (its error in words, the raw text behind a disclosure). Real server, real Samba.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import type { Browser, Locator, Page } from "playwright-core";
import { launchChromium } from "../fixtures/chromium";
import { startSamba, type SambaServer } from "../fixtures/samba";
import { startSluice, tempDir, type SluiceServer } from "../fixtures/sluice-server";
import { addSmbSource, client, createGroup, GOOD_PASSWORD, signUp, waitForJobEnd, type Request } from "../fixtures/http-client";
import { WAIT_LIMIT_MS } from "../fixtures/wait-for";

let docsSamba: SambaServer;
let bulkSamba: SambaServer;
let server: SluiceServer;
let browser: Browser;
let page: Page;
let request: Request;
let user: { email: string; token: string };
let docs: Awaited<ReturnType<typeof addSmbSource>>;

before(async () => {
  docsSamba = await startSamba();
  const bulkDir = tempDir("sluice-report-bulk-");
  // Enough small files that a run lasts long enough to be watched and cancelled.
  for (let i = 0; i < 3000; i++) {
    const folder = path.join(bulkDir, `batch-${Math.floor(i / 250)}`);
    fs.mkdirSync(folder, { recursive: true });
    fs.writeFileSync(path.join(folder, `note-${i}.txt`), `Report note number ${i}. `.repeat(40));
  }
  // And one big log, read as a stream for several seconds: the run cannot finish before the cancel
  // arrives however fast the small files go (a cancel stops the stream at its next piece).
  const log = fs.openSync(path.join(bulkDir, "batch-0", "server-export.log"), "w");
  const megabyte = Array.from({ length: 40_000 }, (_, i) => `export line ${i} of the report share\n`).join("").slice(0, 1024 * 1024);
  for (let i = 0; i < 120; i++) fs.writeSync(log, megabyte);
  fs.closeSync(log);
  fs.chmodSync(bulkDir, 0o755);
  bulkSamba = await startSamba({ extraShares: { bulk: bulkDir } });
  server = await startSluice({ env: { SMB_TIMEOUT_MS: "3000" } });
  request = client(server.api);
  user = await signUp(request, "reports-ui");
  const group = await createGroup(request, user.token);
  docs = await addSmbSource(request, user.token, group, docsSamba, "Report docs");
  browser = await launchChromium();
  page = await browser.newPage();
  await page.goto(server.url);
  await page.getByLabel("Email").fill(user.email);
  await page.getByLabel("Password").fill(GOOD_PASSWORD);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.getByRole("link", { name: "Pipelines" }).waitFor();
});
after(async () => {
  await browser?.close();
  if (server && server.child.exitCode === null) await server.stop();
  await docsSamba?.stop().catch(() => undefined);
  await bulkSamba?.stop();
});

/** The latest run's view in the pipeline's card (its job history below repeats older runs). */
function card(sourceName: string): Locator {
  return page.locator("li.pipeline", { hasText: `${sourceName} →` });
}

function lastRun(c: Locator): Locator {
  return c.locator("div.job");
}

async function openPipelines(): Promise<void> {
  await page.getByRole("link", { name: "Pipelines" }).click();
  await page.getByRole("heading", { name: "Pipelines", level: 1 }).waitFor();
}

describe("run reports", () => {
  it("a run with an unreadable share is 'completed with errors'; skipped files are named with why; indexed is counted apart", async () => {
    await request("POST", `/data_pipelines/${docs.pipeline.id}/ingest`, { token: user.token });
    const job = await waitForJobEnd(request, user.token, docs.pipeline.id);
    assert.equal(job.status, "completed", "the API keeps the spec's status");
    await openPipelines();
    const c = card("Report docs");
    const run = lastRun(c);
    const badge = run.locator("[data-job-outcome]");
    await badge.waitFor();
    assert.equal((await badge.textContent())?.trim(), "completed with errors");
    assert.equal(await badge.getAttribute("data-job-status"), "completed");
    const indexed = Number(await c.locator('[data-count="indexed"]').textContent());
    assert.equal(indexed, job.entities_processed - job.entities_failed - job.entities_skipped);
    assert.ok(job.entities_skipped > 0);
    await run.getByText(`${job.entities_skipped} skipped file`).click();
    await run.locator(".job-skipped li", { hasText: "docs/image.bin" }).getByText("type not supported").waitFor();
  });

  it("an unchanged re-run says 'No changes' with its counts", async () => {
    const c = card("Report docs");
    await c.getByRole("button", { name: "Run now" }).click();
    const summary = lastRun(c).locator("[data-job-summary]");
    await summary.filter({ hasText: "No changes" }).waitFor({ timeout: WAIT_LIMIT_MS });
    const job = (await request("GET", `/data_pipelines/${docs.pipeline.id}/ingest/status`, { token: user.token })).body;
    assert.equal(
      (await summary.textContent())?.trim(),
      `No changes: ${job.files_unchanged} unchanged, 0 added, 0 changed, 0 removed`,
    );
  });

  it("'Run it now' after adding a source runs it; the run shows a percentage, its pace and can be cancelled", async () => {
    await page.getByRole("link", { name: "Data sources" }).click();
    await page.getByLabel("Source name").fill("Report bulk");
    await page.getByLabel("Server name").fill("localhost");
    await page.getByLabel("IP address (optional)").fill("127.0.0.1");
    await page.getByLabel("Port", { exact: true }).fill(String(bulkSamba.port));
    await page.getByLabel("User name").fill(bulkSamba.username);
    await page.getByLabel("Password", { exact: true }).fill(bulkSamba.password);
    await page.getByRole("button", { name: "Add share" }).click();
    await page.getByRole("status").filter({ hasText: "Added Report bulk" }).getByRole("button", { name: "Run it now" }).click({ timeout: WAIT_LIMIT_MS });

    const c = page.locator("li.pipeline.focused");
    const run = lastRun(c);
    await run.locator('[data-job-status="processing"]').waitFor({ timeout: WAIT_LIMIT_MS });
    // A percentage as soon as files are found, then the pace and the time left.
    // Generous: on a busy CI machine the walk of 3,000 files can take a while to find its first ones.
    await run
      .locator("[data-progress]")
      .filter({ hasText: /^\d+\.\d% · \d+ of \d+ files found so far · [\d.]+ files\/s · about .+ left$/ })
      .waitFor({ timeout: WAIT_LIMIT_MS })
      .catch(async (error: Error) => {
        throw new Error(`${error.message}\nthe run showed: ${(await run.textContent())?.replace(/\s+/g, " ")}`);
      });

    // Cancelled only once something is indexed: what it checks below is that what was indexed stays
    // (on a loaded machine the walk may still be finding files when the pace first shows).
    await run
      .locator('[data-count="indexed"]')
      .filter({ hasText: /^[1-9]\d*$/ })
      .waitFor({ timeout: WAIT_LIMIT_MS });
    await c.getByRole("button", { name: "Cancel run" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByText("Files indexed so far stay searchable").waitFor();
    await dialog.getByRole("button", { name: "Yes, cancel the run" }).click();
    // On a timeout, say what the run showed instead (a run that finished first, a refused cancel).
    await run
      .locator('[data-job-outcome="cancelled"]')
      .waitFor({ timeout: WAIT_LIMIT_MS })
      .catch(async (error: Error) => {
        throw new Error(`${error.message}\nthe run showed: ${(await run.textContent())?.replace(/\s+/g, " ")}\nthe page said: ${await page.getByRole("status").allTextContents()}`);
      });
    assert.equal((await run.locator("[data-job-error]").textContent())?.trim(), `Cancelled by ${user.email}`);
    assert.equal(await c.getByRole("button", { name: "Cancel run" }).count(), 0);
    assert.ok(Number(await run.locator('[data-count="indexed"]').textContent()) > 0, "what was indexed stays");
  });

  it("a failed run shows its error in words, the raw error behind 'Technical details', and no moving bar", async () => {
    await docsSamba.stop();
    await openPipelines();
    const c = card("Report docs");
    await c.getByRole("button", { name: "Run now" }).click();
    const run = lastRun(c);
    await run.locator('[data-job-outcome="failed"]').waitFor({ timeout: WAIT_LIMIT_MS });
    assert.match((await run.locator("[data-job-error]").textContent()) ?? "", /^The file server (refused the connection|did not answer in time)/);
    const raw = run.locator("[data-job-error-raw]");
    assert.equal(await raw.isVisible(), false, "the raw error is one click away");
    await run.getByText("Technical details").click();
    assert.match((await raw.textContent()) ?? "", /Source unreachable/);
    assert.equal(await run.getByRole("progressbar").count(), 0);
    assert.equal(await run.getByText("counting files").count(), 0);
  });
});
