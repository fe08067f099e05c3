/**
 * The Windows accounts screen and whose permissions a collection shows (issue 33 item 7), in
 * Debian's Chromium against the real server and a real Samba with NT ACLs: linking a real Samba
 * user by keyboard (a refused password first), the search and ask views' notice changing with the
 * link, removing it; the 409 and 429 answers under the user name; at 640x400 (1280x800 at 200 %
 * zoom) through the Menu, without sideways scrolling, and under axe-core (WCAG 2.2 AA).
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import type { APIRequestContext, Browser, Page } from "playwright-core";
import { launchChromium } from "../fixtures/chromium";
import { GOOD_PASSWORD, uniqueEmail } from "../fixtures/http-client";
import { startSamba, type SambaServer } from "../fixtures/samba";
import { sambaAcls, type SambaAcls } from "../fixtures/samba-acls";
import { startSluice, type SluiceServer } from "../fixtures/sluice-server";
import { WAIT_LIMIT_MS } from "../fixtures/wait-for";

declare const document: any;
declare const window: any;

const AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"];
const ALICE = { name: "alice", password: "Al1ce-Passw0rd!" };
const BOB = { name: "bob", password: "B0b-Passw0rd!" };
/** Only the 429 walk signs in as erin, so its failures count against nobody else. */
const ERIN = { name: "erin", password: "Er1n-Passw0rd!" };
/** Where the screenshots go, to be looked at (not committed). */
const SHOTS = process.env.SLUICE_SCREENSHOTS ?? path.join(os.tmpdir(), "sluice-windows-accounts");

let sluice: SluiceServer;
let samba: SambaServer;
let acls: SambaAcls;
let browser: Browser;

before(async () => {
  [sluice, samba, browser] = await Promise.all([
    startSluice(),
    startSamba({ ntAcls: true, users: [ALICE, BOB, ERIN], unixGroups: { staff: [ALICE.name] } }),
    launchChromium(),
  ]);
  acls = await sambaAcls(samba);
  acls.mapGroup("staff");
  fs.mkdirSync(SHOTS, { recursive: true });
});

after(async () => {
  await browser?.close().catch(() => {});
  await acls?.close();
  await Promise.all([sluice?.stop(), samba?.stop()]);
});

/** A signed-in page at `viewport` whose user owns a group with a permission source on the test Samba; answers its collection's id. */
async function withPermissionSource(viewport: { width: number; height: number }): Promise<{ page: Page; collectionId: string }> {
  const ctx = await browser.newContext({ viewport, bypassCSP: true });
  const page = await ctx.newPage();
  page.setDefaultTimeout(WAIT_LIMIT_MS);
  const signup = await page.request.post(`${sluice.api}/signup`, { data: { email: uniqueEmail("win-accounts"), password: GOOD_PASSWORD } });
  assert.ok(signup.ok(), await signup.text());
  const group = await page.request.post(`${sluice.api}/user_groups`, { data: { group_name: `win-${process.pid}-${Math.random().toString(36).slice(2, 8)}`, group_permission: "write" } });
  assert.ok(group.ok(), await group.text());
  const source = await page.request.post(`${sluice.api}/data_sources/smb/${(await group.json()).created_group_id}`, {
    data: {
      data_source: { data_source_name: `Staff share ${Math.random().toString(36).slice(2, 6)}` },
      smb_source: {
        remote_system_username: samba.username,
        remote_smb_password: samba.password,
        remote_system_name: "localhost",
        default_ip: "127.0.0.1",
        port: samba.port,
        source_permissions: true,
      },
    },
  });
  assert.equal(source.status(), 201, await source.text());
  const created = (await source.json()) as { data_source: { id: string }; pipeline: { collection_id: string } };
  return { page, collectionId: created.pipeline.collection_id };
}

const link = (request: APIRequestContext, dataSourceId: string, account: { name: string; password: string }) =>
  request.post(`${sluice.api}/users/me/smb_accounts`, { data: { data_source_id: dataSourceId, username: account.name, password: account.password } });

const notice = (page: Page) => page.getByTestId("permission-notice");
const focusedId = (page: Page) => page.evaluate(() => document.activeElement?.id ?? "");
const noteOf = (page: Page, id: string) => page.locator(`#${id}-note`).textContent();

async function shoot(page: Page, name: string): Promise<void> {
  const size = page.viewportSize();
  await page.screenshot({ path: path.join(SHOTS, `${name}-${size?.width}x${size?.height}.png`) });
}

async function axeViolations(page: Page): Promise<string[]> {
  await page.addScriptTag({ path: require.resolve("axe-core") });
  const result = (await page.evaluate((tags: string[]) => window.axe.run(document, { runOnly: { type: "tag", values: tags } }), AXE_TAGS)) as {
    violations: Array<{ id: string; help: string; nodes: Array<{ target: string[] }> }>;
  };
  return result.violations.map((v) => `${v.id}: ${v.help} at ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
}

test("by keyboard: the notice says Everyone, a refused password shows under the password, a real Samba user links, the notice names it, Remove unlinks", async () => {
  const { page, collectionId } = await withPermissionSource({ width: 1280, height: 860 });
  try {
    await page.goto(`${sluice.url}/#/collections/${collectionId}`);
    await notice(page).waitFor();
    assert.equal((await notice(page).textContent())?.trim(), "You see only the files everyone may read. Link your Windows account");
    await shoot(page, "01-search-no-link");

    // The notice's link, by keyboard, to the screen; focus lands on its heading.
    await notice(page).getByRole("link", { name: "Link your Windows account" }).focus();
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { level: 1, name: "Windows accounts" }).waitFor();
    assert.equal(await page.evaluate(() => document.activeElement?.tagName), "H1");
    assert.equal(await page.title(), "Windows accounts · Sluice");
    await page.getByText("No Windows account linked yet.").waitFor();

    const form = page.getByRole("form", { name: "Link a Windows account" });
    await page.keyboard.press("Tab");
    assert.equal(await focusedId(page), "link-server");
    assert.match((await form.getByLabel("File server").locator("option:checked").textContent()) ?? "", /^localhost \(Staff share/);
    await page.keyboard.press("Tab");
    assert.equal(await focusedId(page), "link-username");
    assert.equal(await noteOf(page, "link-username"), "DOMAIN\\user or user@domain");
    await page.keyboard.type(ALICE.name);
    await page.keyboard.press("Tab");
    assert.equal(await focusedId(page), "link-password");
    await page.keyboard.type("not-her-password");
    await page.keyboard.press("Enter");

    // Refused: the answer under the password, focus back on it, the field emptied.
    const password = form.getByLabel("Password");
    await page.locator("#link-password-note.field-error").waitFor();
    assert.match((await noteOf(page, "link-password")) ?? "", /^The server refused this user name or password \(STATUS_LOGON_FAILURE\)\.$/);
    assert.equal(await password.getAttribute("aria-invalid"), "true");
    assert.equal(await password.inputValue(), "");
    assert.equal(await focusedId(page), "link-password");
    assert.equal(await form.getByLabel("User name").inputValue(), ALICE.name, "the user name stays to be corrected");
    await shoot(page, "02-refused-password");

    await page.keyboard.type(ALICE.password);
    await page.keyboard.press("Enter");
    const row = page.getByRole("listitem", { name: "Windows account SLUICETEST\\alice on localhost" });
    await row.waitFor();
    assert.equal(await password.inputValue(), "", "the password is not kept once answered");
    assert.equal(await password.getAttribute("aria-invalid"), null);
    const groups = await row.getByRole("list", { name: "Groups of SLUICETEST\\alice" }).getByRole("listitem").allTextContents();
    assert.ok(groups.includes("SLUICETEST\\staff"), `the groups by name: ${groups.join(", ")}`);
    assert.match((await row.textContent()) ?? "", /Groups checked /);
    await shoot(page, "03-linked");

    // The search view and the ask view now name the account.
    await page.goto(`${sluice.url}/#/collections/${collectionId}`);
    await notice(page).getByText("SLUICETEST\\alice").waitFor();
    assert.equal((await notice(page).textContent())?.trim(), "You see the files SLUICETEST\\alice may read.");
    await shoot(page, "04-search-linked");
    await page.goto(`${sluice.url}/#/collections/${collectionId}/ask`);
    await notice(page).getByText("SLUICETEST\\alice").waitFor();
    await shoot(page, "05-ask-linked");

    // Remove, by keyboard through the account menu's link: the dialog opens on Cancel, Tab to confirm.
    await page.getByRole("banner").getByRole("link", { name: "Windows accounts" }).focus();
    await page.keyboard.press("Enter");
    await row.waitFor();
    await row.getByRole("button", { name: "Remove" }).focus();
    await page.keyboard.press("Enter");
    const dialog = page.getByRole("dialog");
    await dialog.waitFor();
    assert.match((await dialog.textContent()) ?? "", /Remove SLUICETEST\\alice\? On localhost you will then see only the files everyone may read/);
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), "Cancel");
    await page.keyboard.press("Tab");
    await page.keyboard.press("Enter");
    await page.getByText("No Windows account linked yet.").waitFor();
    assert.deepEqual(await (await page.request.get(`${sluice.api}/users/me/smb_accounts`)).json(), []);

    await page.goto(`${sluice.url}/#/collections/${collectionId}/ask`);
    await notice(page).getByRole("link", { name: "Link your Windows account" }).waitFor();
  } finally {
    await page.context().close();
  }
});

test("at 640x400 (200 % zoom) through the Menu: 409 and 429 under the user name, no sideways scrolling, and axe finds no violation", async () => {
  // bob is linked by another Sluice user; erin has used up her five failed sign-ins.
  const other = await withPermissionSource({ width: 1280, height: 800 });
  const otherSource = ((await (await other.page.request.get(`${sluice.api}/data_sources`)).json()) as Array<{ id: string }>)[0].id;
  assert.equal((await link(other.page.request, otherSource, BOB)).status(), 201);
  for (let attempt = 0; attempt < 5; attempt += 1) assert.equal((await link(other.page.request, otherSource, { name: ERIN.name, password: "wrong" })).status(), 400);
  await other.page.context().close();

  const { page, collectionId } = await withPermissionSource({ width: 640, height: 400 });
  try {
    await page.goto(`${sluice.url}/#/collections/${collectionId}`);
    await notice(page).waitFor();
    assert.deepEqual(await axeViolations(page), [], "the search view with the notice");
    const fits = () => page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);
    assert.ok(await fits(), "the search view scrolls sideways");
    await shoot(page, "06-search-no-link");

    await page.getByRole("button", { name: "Menu" }).click();
    await page.getByRole("link", { name: "Windows accounts" }).click();
    await page.getByRole("heading", { level: 1, name: "Windows accounts" }).waitFor();
    const form = page.getByRole("form", { name: "Link a Windows account" });

    await form.getByLabel("User name").fill(BOB.name);
    await form.getByLabel("Password").fill(BOB.password);
    await form.getByRole("button", { name: "Link account" }).click();
    await page.locator("#link-username-note.field-error").waitFor();
    assert.match((await noteOf(page, "link-username")) ?? "", /linked by another Sluice user/);
    assert.equal(await form.getByLabel("Password").inputValue(), "");
    assert.equal(await focusedId(page), "link-username");

    await form.getByLabel("User name").fill(ERIN.name);
    await form.getByLabel("Password").fill(ERIN.password);
    await form.getByRole("button", { name: "Link account" }).click();
    await page.locator("#link-username-note.field-error", { hasText: "Too many" }).waitFor();
    assert.match((await noteOf(page, "link-username")) ?? "", /Too many failed sign-ins as this account\. Try again after \d{1,2}:\d{2}.* \(in 1[45] minutes\)\./);
    assert.equal(await form.getByLabel("Password").inputValue(), "");
    assert.equal(await page.locator("#link-password-note.field-error").count(), 0, "nothing under the password");

    assert.ok(await fits(), "Windows accounts scrolls sideways");
    assert.deepEqual(await axeViolations(page), [], "Windows accounts with an error under the user name");
    await shoot(page, "07-too-many");

    await form.getByLabel("User name").fill(ALICE.name);
    await form.getByLabel("Password").fill(ALICE.password);
    await form.getByRole("button", { name: "Link account" }).click();
    await page.getByRole("listitem", { name: "Windows account SLUICETEST\\alice on localhost" }).waitFor();
    assert.ok(await fits(), "a linked account scrolls sideways");
    assert.deepEqual(await axeViolations(page), [], "Windows accounts with a link");
    await shoot(page, "08-linked");

    await page.goto(`${sluice.url}/#/collections/${collectionId}/ask`);
    await notice(page).getByText("SLUICETEST\\alice").waitFor();
    assert.ok(await fits(), "the ask view scrolls sideways");
    assert.deepEqual(await axeViolations(page), [], "the ask view with the notice");
    await shoot(page, "09-ask-linked");
  } finally {
    await page.context().close();
  }
});
