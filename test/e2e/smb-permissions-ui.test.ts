/**
 * The Data sources form's "Use the file server's permissions" checkbox (issue 33 item 1), in
 * Debian's Chromium against the real server and a real Samba: by keyboard only, at 640x400
 * (1280x800 at 200 % zoom), and under axe-core (WCAG 2.2 AA); the source's row says it.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { Browser, Page } from "playwright-core";
import { launchChromium } from "../fixtures/chromium";
import { GOOD_PASSWORD, client, createGroup, uniqueEmail } from "../fixtures/http-client";
import { startSamba, type SambaServer } from "../fixtures/samba";
import { startSluice, type SluiceServer } from "../fixtures/sluice-server";
import { WAIT_LIMIT_MS } from "../fixtures/wait-for";

declare const document: any;
declare const window: any;

const AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"];
let sluice: SluiceServer;
let samba: SambaServer;
let browser: Browser;

before(async () => {
  [sluice, samba, browser] = await Promise.all([startSluice(), startSamba(), launchChromium()]);
});

after(async () => {
  await browser?.close().catch(() => {});
  await Promise.all([sluice?.stop(), samba?.stop()]);
});

/** A signed-in page at `viewport` on Data sources, its user in a group. */
async function onDataSources(viewport: { width: number; height: number }): Promise<Page> {
  const ctx = await browser.newContext({ viewport, bypassCSP: true });
  const page = await ctx.newPage();
  page.setDefaultTimeout(WAIT_LIMIT_MS);
  const signup = await page.request.post(`${sluice.api}/signup`, { data: { email: uniqueEmail("perm-ui"), password: GOOD_PASSWORD } });
  assert.ok(signup.ok(), await signup.text());
  await createGroup(client(sluice.api), ((await signup.json()) as { access_token: string }).access_token, "perm-ui");
  await page.goto(`${sluice.url}/#/sources`);
  await page.getByRole("form", { name: "Add SMB share" }).waitFor();
  return page;
}

const activeLabel = (page: Page) => page.evaluate(() => (document.activeElement?.closest("label")?.textContent ?? document.activeElement?.id ?? "").trim());

test("by keyboard: the checkbox is reached with Tab, explained, toggled with Space, and the new source's row says it", async () => {
  const page = await onDataSources({ width: 1280, height: 860 });
  try {
    const form = page.getByRole("form", { name: "Add SMB share" });
    await form.getByLabel("Source name").focus();
    await page.keyboard.type("Permission share");
    for (const [field, value] of [
      ["Server name", "localhost"],
      ["IP address (optional)", "127.0.0.1"],
      ["Port", String(samba.port)],
      ["User name", samba.username],
      ["Password", samba.password],
    ]) {
      await page.keyboard.press("Tab");
      assert.equal(await page.evaluate(() => document.activeElement?.labels?.[0]?.textContent ?? ""), field === "Port" ? "Port" : field);
      await page.keyboard.press("Control+A");
      await page.keyboard.type(value);
    }
    await page.keyboard.press("Tab"); // Workstation
    await page.keyboard.press("Tab");
    assert.equal(await activeLabel(page), "Use the file server's permissions");
    const box = form.getByRole("checkbox", { name: "Use the file server's permissions" });
    assert.equal(await box.isChecked(), false, "off unless chosen");
    const hint = await page.locator(`#${await box.getAttribute("aria-describedby")}`).textContent();
    assert.match(hint ?? "", /only the files their linked Windows account may read/);
    await page.keyboard.press("Space");
    assert.equal(await box.isChecked(), true);
    await page.keyboard.press("Tab");
    await page.keyboard.press("Enter"); // Add share
    const row = page.locator('[aria-label="source Permission share"]');
    await row.waitFor();
    assert.match((await row.textContent()) ?? "", /file server's permissions/);
    const listed = (await (await page.request.get(`${sluice.api}/data_sources`)).json()) as Array<{ data_source_name: string; smb_source: { source_permissions: boolean } }>;
    assert.equal(listed.find((s) => s.data_source_name === "Permission share")?.smb_source.source_permissions, true);
  } finally {
    await page.context().close();
  }
});

test("at 640x400 (200 % zoom) the checkbox and its line fit without sideways scrolling, and axe finds no violation", async () => {
  const page = await onDataSources({ width: 640, height: 400 });
  try {
    const box = page.getByRole("checkbox", { name: "Use the file server's permissions" });
    await box.scrollIntoViewIfNeeded();
    const where = await box.boundingBox();
    assert.ok(where && where.x >= 0 && where.x + where.width <= 640, `the checkbox sits at ${JSON.stringify(where)}`);
    const layout = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth }));
    assert.ok(layout.scrollWidth <= layout.innerWidth, `Data sources scrolls sideways (${layout.scrollWidth} > ${layout.innerWidth})`);
    await box.check();
    await page.addScriptTag({ path: require.resolve("axe-core") });
    const result = (await page.evaluate((tags: string[]) => window.axe.run(document, { runOnly: { type: "tag", values: tags } }), AXE_TAGS)) as {
      violations: Array<{ id: string; help: string; nodes: Array<{ target: string[] }> }>;
    };
    assert.deepEqual(
      result.violations.map((v) => `${v.id}: ${v.help} at ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`),
      [],
    );
  } finally {
    await page.context().close();
  }
});
