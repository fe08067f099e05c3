import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { it } from "node:test";
import { extractText } from "../../server/ingest/parse/extract-text";
import { tempDir } from "../fixtures/sluice-server";
import { band, realDocumentPdf, renderPages, scanned, toPng, wordsOf } from "../fixtures/scans";

// tesseract.js with nothing but what ships in node_modules: a child process reads a picture with
// every way to the network closed (its own network namespace, where `unshare` may make one; and
// sockets and fetch refused in the process itself), and must read it all the same.
it("tesseract.js reads a picture with no network at all: its core and language data come from the npm packages", async () => {
  const pdf = await realDocumentPdf(1);
  const expected = wordsOf((await extractText("guide.pdf", pdf)).text, 6);
  const [page] = await renderPages(pdf, 200);
  const dir = tempDir("sluice-ocr-offline-");
  const file = path.join(dir, "scan.png");
  fs.writeFileSync(file, toPng(band(scanned(page), 0.05, 0.3)));
  const script = path.join(__dirname, "..", "fixtures", "ocr-offline.js");
  const isolated = spawnSync("unshare", ["-rn", "true"]).status === 0;
  const [command, args] = isolated ? ["unshare", ["-rn", process.execPath, script, file]] : [process.execPath, [script, file]];
  const run = spawnSync(command, args, { encoding: "utf8", env: { ...process.env, HTTPS_PROXY: "http://127.0.0.1:9", HTTP_PROXY: "http://127.0.0.1:9" } });
  fs.rmSync(dir, { recursive: true, force: true });
  assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`);
  const result = JSON.parse(run.stdout) as { engine: string; text: string; tried: string[] };
  assert.equal(result.engine, "tesseract.js");
  assert.deepEqual(result.tried, [], "no connection was even tried");
  const read = [...wordsOf(result.text, 6)];
  const right = read.filter((word) => expected.has(word));
  assert.ok(right.length >= 10 && right.length / read.length >= 0.85, result.text);
});
