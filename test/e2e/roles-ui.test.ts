/**
 * Issue 34 items 1 and 10 in Chromium against the real server: the guided first run of a new
 * instance, the administrator's Invitations screen, and the invitation link's sign-up; by
 * keyboard, at 640x400 (1280x800 at 200 % zoom), under axe-core, errors under the wrong field.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, test } from "node:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { launchChromium } from "../fixtures/chromium";
import { startSluice } from "../fixtures/sluice-server";
import { waitFor } from "../fixtures/wait-for";
import { startDemoInstance, type DemoInstance } from "./demo-instance";
import { axe } from "../fixtures/axe";

declare const document: any;
declare const window: any;

const ROOT = path.resolve(__dirname, "..", "..", __filename.endsWith(".ts") ? "" : "..");
const SCREENSHOTS = path.join(ROOT, "test", "e2e", "screenshots");
const PASSWORD = "roles-Passw0rd";
const WIDE = { width: 1280, height: 800 };
/** 1280x800 at 200 % zoom. */
const ZOOMED = { width: 640, height: 400 };

let demo: DemoInstance;
let browser: Browser;
let adminState: Awaited<ReturnType<BrowserContext["storageState"]>>;
const adminEmail = `roles-admin-${Date.now()}@example.com`;

before(async () => {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  [demo, browser] = await Promise.all([startDemoInstance(), launchChromium()]);
});
after(async () => {
  await browser?.close().catch(() => {});
  await demo?.stop();
});

async function newPage(viewport: { width: number; height: number }, state?: typeof adminState): Promise<{ ctx: BrowserContext; page: Page }> {
  const ctx = await browser.newContext({ viewport, bypassCSP: true, storageState: state });
  const page = await ctx.newPage();
  page.setDefaultTimeout(15_000);
  return { ctx, page };
}

/** Nothing scrolls sideways: what a 200 % zoom must keep. */
async function fitsWidth(page: Page, state: string): Promise<void> {
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(overflow <= 0, `${state}: the page scrolls sideways by ${overflow}px`);
}

const activeId = (page: Page) => page.evaluate(() => document.activeElement?.id ?? "");

/** Presses Tab until the element with this id has focus. */
async function tabToId(page: Page, id: string, max = 40): Promise<void> {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press("Tab");
    if ((await activeId(page)) === id) return;
  }
  assert.fail(`Tab never reached #${id}`);
}

const shot = (page: Page, name: string) => page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });

test("the first account: told it administers, then one form makes the group, the source, its collection and the first run", async () => {
  const { ctx, page } = await newPage(WIDE);
  try {
    await page.goto(demo.sluice.url);
    await page.getByRole("tab", { name: "Sign up" }).click();
    await page.getByText("Nobody has signed up yet: the first account becomes this instance's administrator.").waitFor();
    await page.getByLabel("Email").fill(adminEmail);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign up", exact: true }).click();
    const form = page.getByRole("form", { name: "Add your first source" });
    await form.waitFor();
    // Admins see the Invitations screen in the menu.
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Invitations" }).waitFor();
    await page.locator(".spinner").first().waitFor({ state: "detached" }).catch(() => undefined);
    await axe(page, "first run");
    await shot(page, "34-first-run");

    // By keyboard: the group name is prefilled; a folder outside the allowed roots is refused under its field.
    await page.locator("#main").focus();
    await tabToId(page, "first-path");
    await page.keyboard.type("/definitely/not/allowed");
    await page.keyboard.press("Enter");
    const pathError = page.locator("#first-path-note.field-error");
    await pathError.waitFor();
    assert.equal(await page.getByLabel("Folder path").getAttribute("aria-invalid"), "true");
    await axe(page, "first run with an error under the folder path");
    await shot(page, "35-first-run-error");

    // Corrected: the same group is used again, and the pipeline page opens on the running (or finished) first run.
    await page.getByLabel("Folder path").fill(path.join(demo.root, "docs"));
    await page.keyboard.press("Enter");
    await page.waitForURL(/#\/pipelines\/[0-9a-f-]{36}$/);
    await page.getByRole("heading", { level: 1, name: "Pipelines" }).waitFor();
    const groups = (await (await ctx.request.get(`${demo.sluice.api}/user_groups`)).json()) as { group_name: string; is_member: boolean }[];
    assert.deepEqual(groups.filter((g) => g.is_member).map((g) => g.group_name), ["my-team"]);
    const jobs = await waitForCompleted(ctx);
    assert.equal(jobs, "completed");
    // With a group and a collection, the first run is not offered again.
    await page.goto(`${demo.sluice.url}/#/collections`);
    await page.getByRole("heading", { level: 2, name: "Create a collection" }).waitFor();
    assert.equal(await page.getByRole("form", { name: "Add your first source" }).count(), 0);
    adminState = await ctx.storageState();
  } finally {
    await ctx.close();
  }
});

async function waitForCompleted(ctx: BrowserContext): Promise<string> {
  const pipelines = (await (await ctx.request.get(`${demo.sluice.api}/data_pipelines`)).json()) as { id: string }[];
  assert.equal(pipelines.length, 1);
  let last: { status?: string } = {};
  return waitFor(
    async () => {
      last = (await (await ctx.request.get(`${demo.sluice.api}/data_pipelines/${pipelines[0].id}/ingest/status`)).json()) as { status?: string };
      return last.status && last.status !== "processing" ? last.status : null;
    },
    () => `the first run to end (last: ${JSON.stringify(last)})`,
  );
}

test("Invitations: an administrator makes a link (errors under the email), the link signs that address up once", async () => {
  assert.ok(adminState, "the first test signed the administrator up");
  const invited = `roles-invited-${Date.now()}@example.com`;
  let link = "";
  for (const viewport of [WIDE, ZOOMED]) {
    const size = `${viewport.width}x${viewport.height}`;
    const { ctx, page } = await newPage(viewport, adminState);
    try {
      await page.goto(`${demo.sluice.url}/#/invitations`);
      await page.getByRole("heading", { level: 1, name: "Invitations" }).waitFor();
      await page.locator(".spinner").first().waitFor({ state: "detached" }).catch(() => undefined);
      await axe(page, `invitations ${size}`);
      if (viewport === ZOOMED) {
        await fitsWidth(page, `invitations ${size}`);
        await shot(page, "36-invitations-200-percent");
        continue;
      }
      // By keyboard: an address that has an account is refused under the field.
      await page.locator("#main").focus();
      await tabToId(page, "invite-email");
      await page.keyboard.type(adminEmail);
      await page.keyboard.press("Enter");
      await page.locator("#invite-email-error", { hasText: "An account with this email already exists" }).waitFor();
      assert.equal(await page.getByLabel("Email").getAttribute("aria-invalid"), "true");
      await axe(page, `invitations with an error ${size}`);
      await page.getByLabel("Email").fill(invited);
      await page.keyboard.press("Enter");
      const field = page.getByLabel(`Invitation link for ${invited}`);
      await field.waitFor();
      link = await field.inputValue();
      assert.match(link, /#\/signup\?invitation=[A-Za-z0-9_-]{43}$/);
      await page.getByRole("row", { name: new RegExp(invited) }).getByText("Waiting").waitFor();
      await axe(page, `invitations with a new link ${size}`);
      await shot(page, "37-invitation-made");

      // Withdrawn by keyboard through the confirmation dialog: the row goes, and the server has no such invitation.
      const gone = `roles-gone-${Date.now()}@example.com`;
      await page.getByLabel("Email").fill(gone);
      await page.keyboard.press("Enter");
      await page.getByLabel(`Invitation link for ${gone}`).waitFor();
      await page.getByRole("button", { name: `Withdraw invitation for ${gone}` }).focus();
      await page.keyboard.press("Enter");
      await page.locator("dialog[open]").waitFor();
      await axe(page, "invitations with the withdraw dialog");
      await page.getByRole("button", { name: "Yes, withdraw" }).focus();
      await page.keyboard.press("Enter");
      await page.getByRole("row", { name: new RegExp(gone) }).waitFor({ state: "detached" });
      assert.equal(await page.getByLabel(`Invitation link for ${gone}`).count(), 0, "a withdrawn link is not shown any more");
      const left = (await (await ctx.request.get(`${demo.sluice.api}/invitations`)).json()) as { email: string }[];
      assert.deepEqual(left.map((i) => i.email), [invited]);
    } finally {
      await ctx.close();
    }
  }

  // The link, signed out: the address is given, the account made is in, and the link is spent.
  for (const viewport of [ZOOMED, WIDE]) {
    const { ctx, page } = await newPage(viewport);
    try {
      await page.goto(link);
      const email = page.getByLabel("Email");
      await email.waitFor();
      await page.getByText("The invitation is for this address.").waitFor();
      assert.equal(await email.inputValue(), invited);
      assert.equal(await email.getAttribute("readonly"), "");
      await axe(page, `invitation sign-up ${viewport.width}x${viewport.height}`);
      if (viewport === ZOOMED) {
        await fitsWidth(page, "invitation sign-up 640x400");
        await shot(page, "38-invitation-sign-up-200-percent");
        continue;
      }
      // By keyboard: from the address (read-only) to the password, then Enter.
      await email.focus();
      await page.keyboard.press("Tab");
      assert.equal(await activeId(page), "auth-password");
      await page.keyboard.type(PASSWORD);
      await page.keyboard.press("Enter");
      await page.locator(".user-email", { hasText: invited }).waitFor();
      assert.equal(new URL(page.url()).hash, "#/");
      // Not an administrator: no Invitations in the menu, and the screen says whom to ask.
      assert.equal(await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Invitations" }).count(), 0);
      await page.goto(`${demo.sluice.url}/#/invitations`);
      await page.getByText("Only an administrator of this instance makes invitations. To bring someone in, ask your administrator.").waitFor();
    } finally {
      await ctx.close();
    }
  }

  const { ctx, page } = await newPage(WIDE);
  try {
    await page.goto(link);
    await page.getByRole("alert").filter({ hasText: "This invitation has already been used: sign in instead" }).waitFor();
    await axe(page, "a used invitation link");
    await shot(page, "39-invitation-used");
  } finally {
    await ctx.close();
  }
});

test("the first run without folder sources says so once, in the words of the person at the machine", async () => {
  const bare = await startSluice();
  const { ctx, page } = await newPage(WIDE);
  try {
    await page.goto(bare.url);
    await page.getByRole("tab", { name: "Sign up" }).click();
    await page.getByLabel("Email").fill(`roles-bare-${Date.now()}@example.com`);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign up", exact: true }).click();
    await page.getByRole("form", { name: "Add your first source" }).waitFor();
    const note = page.locator("#first-run-not-set-up");
    await note.waitFor();
    assert.match((await note.textContent()) ?? "", /^Folders on this computer are off\. To read them, set FOLDER_SOURCE_ROOTS/);
    // Said once: the SMB fields are the form, and no second sentence repeats it.
    assert.equal(await page.getByText(/FOLDER_SOURCE_ROOTS/).count(), 1);
    await page.getByLabel("Server name").waitFor();
    await axe(page, "first run, folders off");
    await shot(page, "40-first-run-folders-off");
    await page.setViewportSize(ZOOMED);
    await fitsWidth(page, "first run at 640x400");
    await axe(page, "first run, folders off, 640x400");
    await shot(page, "41-first-run-200-percent");
    // The SMB fields are the Data sources page's (SmbFields.tsx): the same checks, said under each field and announced here.
    assert.equal(await page.getByLabel("Workstation (optional)").count(), 0, "the first run leaves the workstation out");
    await page.getByRole("button", { name: "Add source and start reading" }).click();
    const serverError = page.locator("#first-server-note.field-error");
    await serverError.waitFor();
    assert.equal(await serverError.textContent(), "Enter the file server's host name.");
    assert.equal(await serverError.getAttribute("role"), "alert");
    assert.equal(await page.getByLabel("Server name").getAttribute("aria-invalid"), "true");
    await page.getByLabel("IP address (optional)").fill("not an address");
    await page.locator("#first-ip-note.field-error").filter({ hasText: "Enter an IPv4 or IPv6 address, or leave empty." }).waitFor();
    await axe(page, "first run, SMB fields refused, 640x400");
  } finally {
    await ctx.close();
    await bare.stop();
  }
});
