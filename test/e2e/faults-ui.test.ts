/**
 * The UI's fault warnings in Chromium: the low-disk banner (DATA_DIR on a small tmpfs, so
 * /api/health says low) and a damaged collection index on the Collections page.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, describe, it } from "node:test";
import { chromium, type Browser } from "playwright-core";
import { startSamba, type SambaServer } from "../fixtures/samba";
import { startSluice, type SluiceServer } from "../fixtures/sluice-server";
import { addSmbSource, client, createGroup, GOOD_PASSWORD, signUp, waitForJobEnd } from "../fixtures/http-client";
import { mountSmallFs, type SmallFs } from "../fixtures/small-fs";
import { WAIT_LIMIT_MS } from "../fixtures/wait-for";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];

const small = mountSmallFs(64);
let samba: SambaServer | undefined;
let server: SluiceServer | undefined;
let browser: Browser | undefined;
after(async () => {
  await browser?.close();
  if (server && server.child.exitCode === null) await server.stop();
  await samba?.stop();
  if (!("skip" in small)) small.unmount();
});

describe("fault warnings in the UI", { skip: "skip" in small ? small.skip : false }, () => {
  it("shows the low-disk banner and a damaged collection with what to do", async () => {
    const dataDir = (small as SmallFs).dir;
    samba = await startSamba();
    server = await startSluice({ dataDir, env: { MIN_FREE_DISK_MB: "1" } });
    const request = client(server.api);
    const { email, token } = await signUp(request, "faults-ui");
    const source = await addSmbSource(request, token, await createGroup(request, token), samba, "Faulty");
    await request("POST", `/data_pipelines/${source.pipeline.id}/ingest`, { token });
    assert.equal((await waitForJobEnd(request, token, source.pipeline.id)).status, "completed");
    await server.stop();
    const file = path.join(dataDir, "indexes", `${source.pipeline.collection_id}.db`);
    fs.truncateSync(file, Math.floor(fs.statSync(file).size / 2));
    server = await startSluice({ dataDir });

    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
    const page = await browser.newPage();
    await page.goto(server.url);
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill(GOOD_PASSWORD);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();

    const banner = page.getByRole("status").filter({ hasText: "Disk space is low" });
    await banner.waitFor({ timeout: WAIT_LIMIT_MS });
    // biome-ignore lint/performance/useDomNodeTextContent: Playwright's innerText() is the text as shown, which is what is checked
    assert.match(await banner.innerText(), /MB free where Sluice keeps its data\. Free some space/);
    const row = page.getByRole("row", { name: "collection Faulty" });
    await row.getByText("index damaged: re-run its pipeline to rebuild").waitFor({ timeout: WAIT_LIMIT_MS });
  });
});
