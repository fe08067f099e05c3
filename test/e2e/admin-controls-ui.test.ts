/**
 * Issue 34 item 1 on the screens: on a server where instance-wide actions need an administrator
 * (ADMIN_EMAILS set), a member meets no Pull or Delete button on the Models screen and no folder
 * form on Data sources, only one line saying an administrator can; the administrator has them.
 * In Debian's Chromium against the real server, by keyboard, at 1280x800 and 640x400 (1280x800 at
 * 200 % zoom), under axe-core (docs/decisions/0472-admin-only-controls-hidden.md).
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, test } from "node:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { launchChromium } from "../fixtures/chromium";
import { startDemoInstance, type DemoInstance } from "./demo-instance";
import { axe } from "../fixtures/axe";

// The functions passed to page.evaluate run in the page; this Node-side program has no DOM types.
declare const document: any;
declare const window: any;

const ROOT = path.resolve(__dirname, "..", "..", __filename.endsWith(".ts") ? "" : "..");
const SCREENSHOTS = path.join(ROOT, "test", "e2e", "screenshots");
const PASSWORD = "admin-ctl-Passw0rd";
const ADMIN = `admin-ctl-${process.pid}@example.com`;
const MEMBER = `member-ctl-${process.pid}@example.com`;
const MODEL = "smollm2:135m";
/** The shipped library's entry the search shows, with its Pull buttons for an administrator. */
const LIBRARY_QUERY = "tinyllama";
const VIEWPORTS = [
  { width: 1280, height: 800 },
  { width: 640, height: 400 },
];
const MODELS_NOTE = "On this server an administrator pulls and removes models; you can add catalog models to your own list.";
const FOLDERS_NOTE = "On this server an administrator adds folder sources, since they read the server's own disks.";

let demo: DemoInstance;
let browser: Browser;

before(async () => {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  [demo, browser] = await Promise.all([startDemoInstance({ ADMIN_EMAILS: ADMIN }), launchChromium()]);
  // Both sign up (sign-up is open on loopback); each has a group, so the source forms show; the catalog holds one model.
  for (const email of [ADMIN, MEMBER]) {
    const ctx = await browser.newContext();
    try {
      assert.ok((await ctx.request.post(`${demo.sluice.api}/signup`, { data: { email, password: PASSWORD } })).ok(), `sign-up of ${email}`);
      const group = await ctx.request.post(`${demo.sluice.api}/user_groups`, { data: { group_name: `g-${email.split("@")[0]}`, group_permission: "write" } });
      assert.ok(group.ok(), await group.text());
      if (email === ADMIN) {
        const pulled = await ctx.request.post(`${demo.sluice.api}/models`, { data: { model_name: MODEL } });
        assert.match(await pulled.text(), /"status":"completed"/, "the administrator's pull");
      } else {
        const refused = await ctx.request.post(`${demo.sluice.api}/models`, { data: { model_name: MODEL } });
        assert.equal(refused.status(), 403, "the server is guarded: the buttons hidden below would answer 403");
      }
    } finally {
      await ctx.close();
    }
  }
});
after(async () => {
  await browser?.close().catch(() => {});
  await demo?.stop();
});

async function signedIn(email: string, viewport: { width: number; height: number }): Promise<{ ctx: BrowserContext; page: Page }> {
  const ctx = await browser.newContext({ viewport, bypassCSP: true });
  assert.ok((await ctx.request.post(`${demo.sluice.api}/signin`, { data: { email, password: PASSWORD } })).ok(), `sign-in of ${email}`);
  const page = await ctx.newPage();
  page.setDefaultTimeout(15_000);
  return { ctx, page };
}

async function fitsWidth(page: Page, state: string): Promise<void> {
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(overflow <= 0, `${state}: the page scrolls sideways by ${overflow}px`);
}

/** What Tab reaches from the page's heading to the end of the page: each focused control's accessible text, in order. */
async function tabStops(page: Page, max = 80): Promise<string[]> {
  await page.locator("h1").focus();
  const stops: string[] = [];
  for (let i = 0; i < max; i++) {
    await page.keyboard.press("Tab");
    const stop = (await page.evaluate(() => {
      const el = document.activeElement;
      if (!el || el === document.body || !document.getElementById("main")?.contains(el)) return null;
      return `${el.tagName.toLowerCase()}:${(el.getAttribute("aria-label") ?? el.textContent ?? "").trim()}`;
    })) as string | null;
    if (stop === null) break;
    stops.push(stop);
  }
  return stops;
}

const shot = (page: Page, name: string) => page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });

/** The Models screen with the catalog row and the library's entry in view. */
async function openModels(page: Page): Promise<void> {
  await page.goto(`${demo.sluice.url}/#/models`);
  await page.getByRole("heading", { level: 1, name: "Models" }).waitFor();
  await page.locator("th", { hasText: MODEL }).waitFor();
  await page.getByLabel("Search the public library").fill(LIBRARY_QUERY);
  await page.locator(".library-item", { hasText: LIBRARY_QUERY }).first().waitFor();
  await page.locator(".spinner").first().waitFor({ state: "detached" }).catch(() => undefined);
}

for (const viewport of VIEWPORTS) {
  const size = `${viewport.width}x${viewport.height}`;

  test(`a member sees no Pull or Delete button and no folder form, one line each says an administrator can (${size})`, async () => {
    const { ctx, page } = await signedIn(MEMBER, viewport);
    try {
      await openModels(page);
      await page.getByText(MODELS_NOTE).waitFor();
      assert.equal(await page.getByRole("button", { name: /^Pull / }).count(), 0, "no Pull button");
      assert.equal(await page.getByRole("button", { name: "Delete", exact: true }).count(), 0, "no Delete button in the catalog");
      // The library still tells what there is: the sizes as text, where the buttons were.
      await page.locator(".library-item .badge", { hasText: `${LIBRARY_QUERY}:` }).first().waitFor();
      const stops = await tabStops(page);
      assert.ok(stops.some((s) => s.includes("Add to my models")), `the member's own actions are still in reach: ${stops.join(" | ")}`);
      assert.deepEqual(stops.filter((s) => /^button:(Pull |Delete$)/.test(s)), [], "Tab reaches no Pull or Delete");
      await fitsWidth(page, `models, member, ${size}`);
      await axe(page, `models, member, ${size}`);
      await shot(page, `42-models-member-${size}`);

      await page.goto(`${demo.sluice.url}/#/sources`);
      await page.getByRole("heading", { level: 1, name: "Data sources" }).waitFor();
      await page.getByRole("heading", { level: 2, name: "Add a folder" }).waitFor();
      await page.getByText(FOLDERS_NOTE).waitFor();
      assert.equal(await page.getByLabel("Folder path").count(), 0, "no folder form");
      assert.equal(await page.getByRole("button", { name: "Add folder" }).count(), 0);
      // The SMB form, which members may use, is still there.
      await page.getByRole("button", { name: "Add share" }).waitFor();
      await page.getByText("No data sources yet. Add an SMB share to start.").waitFor();
      assert.ok(!(await tabStops(page, 120)).some((s) => s === "button:Add folder"), "Tab reaches no Add folder");
      await fitsWidth(page, `sources, member, ${size}`);
      await axe(page, `sources, member, ${size}`);
      await shot(page, `43-sources-member-${size}`);
    } finally {
      await ctx.close();
    }
  });

  test(`the administrator has Pull, Delete and the folder form, by keyboard, and no such line (${size})`, async () => {
    const { ctx, page } = await signedIn(ADMIN, viewport);
    try {
      await openModels(page);
      const stops = await tabStops(page);
      assert.ok(stops.some((s) => s.startsWith(`button:Pull ${LIBRARY_QUERY}:`)), `Tab reaches a Pull button: ${stops.join(" | ")}`);
      assert.ok(stops.includes("button:Delete"), `Tab reaches the catalog's Delete: ${stops.join(" | ")}`);
      assert.equal(await page.getByText(MODELS_NOTE).count(), 0);
      // Delete opens its confirmation by keyboard, and Escape leaves the model where it is.
      await page.getByRole("button", { name: "Delete", exact: true }).focus();
      await page.keyboard.press("Enter");
      await page.locator("dialog[open]").waitFor();
      await axe(page, `models, administrator, delete dialog, ${size}`);
      await page.keyboard.press("Escape");
      await page.locator("dialog[open]").waitFor({ state: "detached" });
      await page.locator("th", { hasText: MODEL }).waitFor();
      await fitsWidth(page, `models, administrator, ${size}`);
      await axe(page, `models, administrator, ${size}`);
      await shot(page, `44-models-administrator-${size}`);

      await page.goto(`${demo.sluice.url}/#/sources`);
      await page.getByRole("heading", { level: 1, name: "Data sources" }).waitFor();
      await page.getByLabel("Folder path").waitFor();
      assert.equal(await page.getByText(FOLDERS_NOTE).count(), 0);
      assert.ok((await tabStops(page, 120)).includes("button:Add folder"), "Tab reaches Add folder");
      await page.getByText("No data sources yet. Add an SMB share, a folder to start.").waitFor();
      await fitsWidth(page, `sources, administrator, ${size}`);
      await axe(page, `sources, administrator, ${size}`);
      await shot(page, `45-sources-administrator-${size}`);
    } finally {
      await ctx.close();
    }
  });
}
