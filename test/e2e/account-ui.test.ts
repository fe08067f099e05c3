/**
 * The account screens (API keys, password, sign out everywhere, deletion) and the audit trail, by
 * keyboard, at 1280x800 and 640x400 (1280x800 at 200 % zoom), under axe-core (WCAG 2.2 AA), in
 * Debian's Chromium against the real server.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { launchChromium } from "../fixtures/chromium";
import { startSluice, type SluiceServer } from "../fixtures/sluice-server";
import { axe } from "../fixtures/axe";

// The functions passed to page.evaluate run in the page; this Node-side program has no DOM types.
declare const document: any;
declare const window: any;

const PASSWORD = "acct-Passw0rd";
const ADMIN = `acct-admin-${process.pid}@example.com`;

let sluice: SluiceServer;
let browser: Browser;

before(async () => {
  [sluice, browser] = await Promise.all([startSluice({ env: { ADMIN_EMAILS: ADMIN } }), launchChromium()]);
});

after(async () => {
  await browser?.close().catch(() => {});
  await sluice?.stop();
});

/** A browser context signed in as a new account (or the administrator). */
async function signedIn(viewport: { width: number; height: number }, email = `acct-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}@example.com`): Promise<{ ctx: BrowserContext; page: Page; email: string }> {
  const ctx = await browser.newContext({ viewport, bypassCSP: true });
  const signup = await ctx.request.post(`${sluice.api}/signup`, { data: { email, password: PASSWORD } });
  if (!signup.ok()) assert.ok((await ctx.request.post(`${sluice.api}/signin`, { data: { email, password: PASSWORD } })).ok());
  const page = await ctx.newPage();
  page.setDefaultTimeout(15_000);
  return { ctx, page, email };
}

/** Presses Tab until the focused element has this id. */
async function tabToId(page: Page, id: string, max = 60): Promise<void> {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press("Tab");
    if ((await page.evaluate(() => document.activeElement?.id ?? "")) === id) return;
  }
  assert.fail(`Tab never reached #${id}`);
}

/** The page fits its width: nothing scrolls sideways but the audit table's own box. */
async function fitsWidth(page: Page, state: string): Promise<void> {
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(overflow <= 1, `${state}: the page scrolls sideways by ${overflow}px`);
}

for (const viewport of [
  { width: 1280, height: 800 },
  { width: 640, height: 400 },
]) {
  const size = `${viewport.width}x${viewport.height}`;

  test(`account page by keyboard, axe clean, errors under the field (${size})`, async () => {
    const { ctx, page } = await signedIn(viewport);
    try {
      await page.goto(`${sluice.url}/#/account`);
      await page.getByRole("heading", { level: 1, name: "Account" }).waitFor();
      await fitsWidth(page, `account ${size}`);
      await axe(page, `account ${size}`);

      // Make a key by keyboard: the key is shown once, selected for copying.
      await tabToId(page, "api-key-name");
      await page.keyboard.type("nightly script");
      await page.keyboard.press("Enter");
      const keyField = page.locator("#api-key-value");
      await keyField.waitFor();
      assert.match(await keyField.inputValue(), /^sluice_key_/);
      await page.waitForFunction(() => document.activeElement?.id === "api-key-value");
      await axe(page, `account with a new key ${size}`);
      await page.getByRole("button", { name: "I have copied it" }).click();
      await page.getByText("never used").waitFor();

      // A wrong current password: the error sits under that field, tied to it.
      await page.getByLabel("Current password").fill("not-my-password-1");
      await page.getByLabel("New password").fill("another-Passw0rd");
      await page.getByRole("button", { name: "Change password" }).click();
      const note = page.locator("#current-password-note");
      await note.waitFor();
      assert.match((await note.textContent()) ?? "", /current password is not right/);
      assert.equal(await page.getByLabel("Current password").getAttribute("aria-describedby"), "current-password-note");
      assert.equal(await page.getByLabel("Current password").getAttribute("aria-invalid"), "true");
      await axe(page, `account with a password error ${size}`);

      // Revoke through the confirmation dialog, by keyboard.
      await page.getByRole("button", { name: "Revoke nightly script" }).focus();
      await page.keyboard.press("Enter");
      await page.locator("dialog[open]").waitFor();
      await axe(page, `account with the revoke dialog ${size}`);
      await page.getByRole("button", { name: "Yes, revoke" }).focus();
      await page.keyboard.press("Enter");
      await page.getByText("No API keys.").waitFor();
    } finally {
      await ctx.close();
    }
  });
}

test("sign out everywhere and delete account return to the sign-in screen", async () => {
  const { ctx, page, email } = await signedIn({ width: 1280, height: 800 });
  try {
    await page.goto(`${sluice.url}/#/account`);
    await page.getByRole("button", { name: "Sign out everywhere" }).click();
    await page.getByRole("button", { name: "Yes, sign out everywhere" }).click();
    await page.getByRole("tab", { name: "Sign in" }).waitFor();

    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.getByRole("link", { name: "Account", exact: true }).click();
    await page.getByRole("heading", { level: 1, name: "Account" }).waitFor();
    await page.getByRole("button", { name: "Delete my account" }).click();
    await page.getByRole("button", { name: "Yes, delete my account" }).click();
    await page.getByRole("tab", { name: "Sign in" }).waitFor();
    const again = await ctx.request.post(`${sluice.api}/signin`, { data: { email, password: PASSWORD } });
    assert.equal(again.status(), 401, "the account is gone");
  } finally {
    await ctx.close();
  }
});

test("the audit trail: administrators see it (axe clean, wide and narrow), others are told who can", async () => {
  for (const viewport of [
    { width: 1280, height: 800 },
    { width: 640, height: 400 },
  ]) {
    const size = `${viewport.width}x${viewport.height}`;
    const admin = await signedIn(viewport, ADMIN);
    try {
      await admin.page.goto(`${sluice.url}/#/collections`);
      if (viewport.width < 1000) await admin.page.getByRole("button", { name: "Menu" }).click();
      await admin.page.getByRole("link", { name: "Audit trail" }).click();
      await admin.page.getByRole("heading", { level: 1, name: "Audit trail" }).waitFor();
      await admin.page.getByRole("cell", { name: "Signed up" }).first().waitFor();
      await fitsWidth(admin.page, `audit ${size}`);
      await axe(admin.page, `audit ${size}`);
    } finally {
      await admin.ctx.close();
    }
  }
  const other = await signedIn({ width: 1280, height: 800 });
  try {
    await other.page.goto(`${sluice.url}/#/collections`);
    await other.page.getByRole("link", { name: "Account", exact: true }).waitFor();
    assert.equal(await other.page.getByRole("link", { name: "Audit trail" }).count(), 0, "no link for a non-administrator");
    await other.page.goto(`${sluice.url}/#/audit`);
    await other.page.getByText("Only an administrator of this Sluice server can read its audit trail.").waitFor();
    await axe(other.page, "audit refused");
  } finally {
    await other.ctx.close();
  }
});
