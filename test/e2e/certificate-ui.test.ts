/**
 * The Account screen's "This server's certificate" card over real HTTPS (TLS_CERT and TLS_KEY from
 * a test CA the openssl command made), in Debian's Chromium: the fingerprint is openssl's, the
 * Copy button works by keyboard and puts exactly it on the clipboard, the page fits 1280x800 and
 * 640x400 (200 % zoom) and is axe clean; over plain HTTP the card is not there. The desktop
 * app's LAN switch beside it works by keyboard.
 */
import assert from "node:assert/strict";
import path from "node:path";
import { after, before, test } from "node:test";
import type { Browser, Page } from "playwright-core";
import { launchChromium } from "../fixtures/chromium";
import { startSluice, type SluiceServer } from "../fixtures/sluice-server";
import { makeTestCa, opensslFingerprint, type TestCa } from "../fixtures/test-ca";
import { axe } from "../fixtures/axe";

// The functions passed to page.evaluate run in the page; this Node-side program has no DOM types.
declare const document: any;
declare const window: any;
declare const navigator: any;

const PASSWORD = "cert-Passw0rd";
const SCREENSHOTS = path.resolve(__dirname, "..", "..", __filename.endsWith(".ts") ? "" : "..", "test", "e2e", "screenshots");

let ca: TestCa;
let sluice: SluiceServer;
let browser: Browser;

before(async () => {
  ca = makeTestCa();
  [sluice, browser] = await Promise.all([startSluice({ env: { TLS_CERT: ca.certFile, TLS_KEY: ca.keyFile } }), launchChromium()]);
});

after(async () => {
  await browser?.close().catch(() => {});
  await sluice?.stop();
});

/** Presses Tab until the focused element has this accessible label. */
async function tabToLabel(page: Page, label: string, max = 60): Promise<void> {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press("Tab");
    if ((await page.evaluate(() => document.activeElement?.getAttribute("aria-label") ?? "")) === label) return;
  }
  assert.fail(`Tab never reached "${label}"`);
}

for (const viewport of [
  { width: 1280, height: 800 },
  { width: 640, height: 400 },
]) {
  const size = `${viewport.width}x${viewport.height}`;

  test(`the certificate card over HTTPS: openssl's fingerprint, copied by keyboard, fits and is axe clean (${size})`, async () => {
    // The test CA is not one Chromium knows: it would show its warning, which a person clicks through after comparing the fingerprint.
    const ctx = await browser.newContext({ viewport, ignoreHTTPSErrors: true, bypassCSP: true });
    await ctx.grantPermissions(["clipboard-read", "clipboard-write"], { origin: sluice.url });
    try {
      const email = `cert-${size}-${process.pid}-${Date.now()}@example.com`;
      assert.ok((await ctx.request.post(`${sluice.api}/signup`, { data: { email, password: PASSWORD } })).ok());
      const page = await ctx.newPage();
      page.setDefaultTimeout(15_000);
      await page.goto(`${sluice.url}/#/account`);
      const card = page.getByRole("region", { name: "This server's certificate" });
      await card.waitFor();
      const expected = opensslFingerprint(ca.certFile);
      assert.equal((await card.locator("#certificate-fingerprint").textContent())?.trim(), expected);
      // The person at the machine (this browser is on loopback) is told to compare on the other computer.
      assert.match((await card.textContent()) ?? "", /On another computer, open the certificate the browser shows/);

      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 1, `${size}: the page scrolls sideways by ${overflow}px`);
      const box = await card.locator("#certificate-fingerprint").boundingBox();
      const cardBox = await card.boundingBox();
      assert.ok(box && cardBox && box.x + box.width <= cardBox.x + cardBox.width + 1, "the fingerprint wraps inside its card");
      await axe(page, `account with certificate ${size}`);

      await tabToLabel(page, "Copy the certificate fingerprint");
      await page.keyboard.press("Enter");
      await card.getByText("Copied", { exact: true }).waitFor();
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), expected);
      await card.scrollIntoViewIfNeeded();
      await page.screenshot({ path: path.join(SCREENSHOTS, `certificate-card-${size}.png`), fullPage: viewport.width > 700 });
      await axe(page, `account with certificate, copied ${size}`);
    } finally {
      await ctx.close();
    }
  });
}

test("the desktop app's LAN switch on the Account screen, by keyboard at 640x400, axe clean (the preload's bridge stood in for)", async () => {
  const ctx = await browser.newContext({ viewport: { width: 640, height: 400 }, ignoreHTTPSErrors: true, bypassCSP: true });
  const fingerprint = opensslFingerprint(ca.certFile);
  // What main/preload.ts exposes and main/main.ts answers: the page cannot tell a stand-in from it.
  await ctx.addInitScript((sha) => {
    const state = { enabled: true, urls: ["https://192.0.2.10:8420/"], certificateSha256: sha };
    const w = window as any;
    w.lanCalls = [];
    w.sluiceDesktop = {
      getLanAccess: async () => ({ ...state, urls: state.enabled ? state.urls : [] }),
      setLanAccess: async (enabled: boolean) => {
        w.lanCalls.push(enabled);
        state.enabled = enabled;
        return { ...state, urls: enabled ? state.urls : [] };
      },
    };
  }, fingerprint);
  try {
    assert.ok((await ctx.request.post(`${sluice.api}/signup`, { data: { email: `cert-lan-${process.pid}@example.com`, password: PASSWORD } })).ok());
    const page = await ctx.newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(`${sluice.url}/#/account`);
    const card = page.getByRole("region", { name: "LAN access" });
    await card.getByRole("list", { name: "Addresses for colleagues" }).waitFor();
    assert.equal((await card.getByRole("listitem").allTextContents()).join(), "https://192.0.2.10:8420/");
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 1, `the page scrolls sideways by ${overflow}px`);
    await axe(page, "account with the LAN switch on, 640x400");
    await card.scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(SCREENSHOTS, "lan-access-640x400.png") });

    for (let i = 0; i < 60 && (await page.evaluate(() => document.activeElement?.id ?? "")) !== "lan-access"; i++) await page.keyboard.press("Tab");
    assert.equal(await page.evaluate(() => document.activeElement?.id ?? ""), "lan-access", "Tab reaches the switch");
    assert.equal(await page.locator("#lan-access").isChecked(), true);
    await page.keyboard.press("Space");
    await card.getByRole("list", { name: "Addresses for colleagues" }).waitFor({ state: "detached" });
    assert.deepEqual(await page.evaluate(() => window.lanCalls), [false]);
    assert.equal(await page.locator("#lan-access").isChecked(), false);
    await axe(page, "account with the LAN switch off, 640x400");
  } finally {
    await ctx.close();
  }
});

test("no certificate card where the server speaks plain HTTP (GET /instance tls null)", async () => {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 }, ignoreHTTPSErrors: true });
  try {
    assert.ok((await ctx.request.post(`${sluice.api}/signup`, { data: { email: `cert-plain-${process.pid}@example.com`, password: PASSWORD } })).ok());
    const page = await ctx.newPage();
    page.setDefaultTimeout(15_000);
    // What a plain-HTTP server answers (test/integration/tls.test.ts checks that it does).
    await page.route("**/api/instance", async (route) => {
      const real = await route.fetch();
      await route.fulfill({ response: real, json: { ...(await real.json()), tls: null } });
    });
    // The screen has had the answer saying "no TLS" before the card's absence is checked.
    const served = page.waitForResponse("**/api/instance");
    await page.goto(`${sluice.url}/#/account`);
    await served;
    await page.getByRole("heading", { level: 2, name: "API keys" }).waitFor();
    assert.equal(await page.getByRole("heading", { name: "This server's certificate" }).count(), 0);
    // A refetch still in the route when the context closes would reject after the test ended.
    await page.unrouteAll({ behavior: "ignoreErrors" });
  } finally {
    await ctx.close();
  }
});
