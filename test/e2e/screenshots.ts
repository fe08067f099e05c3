/**
 * `npm run screenshots [folder]`: PNGs of every screen at 1280x800 and at 640x400 (1280x800 at
 * 200 % zoom), from a demo instance (demo-instance.ts), into `screenshots/` (not committed).
 * Not a test: it asserts nothing, it shows what a person sees.
 */
import fs from "node:fs";
import path from "node:path";
import type { Page } from "playwright-core";
import { launchChromium } from "../fixtures/chromium";
import { DEMO_ANY_WORDS, DEMO_PHRASE, seedDemoData, startDemoInstance } from "./demo-instance";

const ROOT = path.resolve(__dirname, "..", "..", "..");
const OUT = path.resolve(process.argv[2] ?? path.join(ROOT, "screenshots"));
const SIZES = [
  { width: 1280, height: 800 },
  { width: 640, height: 400 },
];

async function main(): Promise<void> {
  fs.mkdirSync(OUT, { recursive: true });
  const [demo, browser] = await Promise.all([startDemoInstance(), launchChromium()]);
  try {
    const seedCtx = await browser.newContext();
    const email = `ada.lovelace@example.com`;
    await seedCtx.request.post(`${demo.sluice.api}/signup`, { data: { email, password: "Harbour-2024" } });
    const seeded = await seedDemoData(seedCtx.request, demo, { group: "harbour-crew", source: "Harbour notes" });
    const state = await seedCtx.storageState();
    await seedCtx.close();

    for (const viewport of SIZES) {
      const size = `${viewport.width}x${viewport.height}`;
      const shoot = async (page: Page, name: string) => {
        const file = path.join(OUT, `${name}-${size}.png`);
        await page.screenshot({ path: file });
        process.stdout.write(`${path.relative(process.cwd(), file)}\n`);
      };
      const out = await browser.newContext({ viewport });
      const signIn = await out.newPage();
      await signIn.goto(demo.sluice.url);
      await signIn.getByRole("tab", { name: "Sign in" }).waitFor();
      await shoot(signIn, "01-sign-in");
      await signIn.getByRole("tab", { name: "Sign up" }).click();
      await signIn.getByRole("tabpanel", { name: "Sign up" }).waitFor();
      await shoot(signIn, "01b-sign-up");
      await out.close();

      const ctx = await browser.newContext({ viewport, storageState: state });
      const page = await ctx.newPage();
      const visit = async (route: string, heading: string | RegExp) => {
        await page.goto(`${demo.sluice.url}/#/${route}`);
        await page.getByRole("heading", { level: 1, name: heading }).waitFor();
        await page.locator(".spinner").first().waitFor({ state: "detached", timeout: 5_000 }).catch(() => undefined);
      };
      await visit("collections", "Collections");
      await shoot(page, "02-collections");
      await page.getByRole("button", { name: "Delete" }).first().click();
      await page.locator("dialog[open]").waitFor();
      await shoot(page, "03-delete-dialog");
      await page.keyboard.press("Escape");
      await visit(`collections/${seeded.collectionId}`, seeded.collectionName);
      await page.getByLabel("Search this collection").fill(DEMO_PHRASE);
      await page.keyboard.press("Enter");
      await page.locator("article.result").first().waitFor();
      await shoot(page, "04-search");
      await page.getByLabel("Search this collection").fill(DEMO_ANY_WORDS);
      await page.keyboard.press("Enter");
      await page.locator("[data-matched=any]").waitFor();
      await page.locator("article.result").first().getByRole("button", { name: /^Copy path of / }).click();
      await page.locator(".copied").waitFor();
      await page.locator("#results-heading").evaluate((el) => el.scrollIntoView());
      await shoot(page, "04b-search-any-words");
      await visit(`collections/${seeded.collectionId}/ask`, `Ask ${seeded.collectionName}`);
      await shoot(page, "04c-ask");
      await visit("groups", "Groups");
      await shoot(page, "05-groups");
      await visit("sources", "Data sources");
      await shoot(page, "06-sources");
      await visit("pipelines", "Pipelines");
      await shoot(page, "07-pipelines");
      await visit(`pipelines/${seeded.pipelineId}`, "Pipelines");
      await page.locator(".pipeline.focused [data-job-status]").waitFor();
      await shoot(page, "07b-pipeline-detail");
      await visit("models", "Models");
      await shoot(page, "08-models");
      // The demo has no SMB source: the screen says so (test/e2e/windows-accounts-ui.test.ts shoots it against Samba).
      await visit("windows-accounts", "Windows accounts");
      await shoot(page, "08b-windows-accounts");
      if (viewport.width < 1000) {
        await page.getByRole("button", { name: "Menu" }).click();
        await shoot(page, "09-menu");
      }
      await ctx.close();
    }
  } finally {
    await browser.close();
    await demo.stop();
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
