import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, afterEach, describe, it } from "node:test";
import { extractText } from "../../server/ingest/parse/extract-text";
import type { GrayImage } from "../../server/ingest/parse/ocr/gray-image";
import { limitChild } from "../../server/ingest/parse/ocr/child-limit";
import { allowanceBuffer, configureAllowance, nativeRunning, releaseThreadCell, takeNative, takeWasmWorker, wasmWorkerHeld } from "../../server/ingest/parse/ocr/ocr-allowance";
import { configureOcr, useRecognizerForTests } from "../../server/ingest/parse/ocr/ocr-engine";
import { DEFAULT_OCR } from "../../server/ingest/parse/ocr/ocr-settings";
import { parseBatch } from "../../server/ingest/parse/parse-batch";
import { ParseError } from "../../server/ingest/parse/parse-types";
import { ParserPool } from "../../server/ingest/parse/parser-pool";
import { childrenNamed } from "../fixtures/processes";
import { band, imageOnlyPdf, realDocumentPdf, renderPages, scanned, toPng, toTiff } from "../fixtures/scans";
import { waitFor } from "../fixtures/wait-for";

// Pages of one file read with several recognitions at once (decision 0494), the OCR allowance
// the parser threads share (0494, 0495), a cancelled parse ending its tesseract processes, and
// the CPU-time limit of a process (0496).

/** A picture read by the stand-in recognizer: the test says when it ends and what it read. */
interface Call {
  label: string;
  /** The picture's height, from its PGM header: which page it was. */
  height: number;
  signal?: AbortSignal;
  resolve(text: string): void;
  reject(error: Error): void;
}

let calls: Call[] = [];

function standIn(): void {
  calls = [];
  useRecognizerForTests(
    (image, page, _dpi, signal) =>
      new Promise<string>((resolve, reject) => {
        const [, height] = /^P5\n\d+ (\d+)\n/.exec(new TextDecoder().decode(image.subarray(0, 32))) ?? [];
        calls.push({ label: page.label, height: Number(height), signal, resolve, reject });
        signal?.addEventListener("abort", () => reject(new Error("stopped")));
      }),
  );
}

/**
 * Pages of growing height, of a grey pattern (a JPEG of a blank one is so small that its Buffer
 * shares Node's pool, which pdf-lib misreads): the height a recognizer is handed says which page it got.
 */
function blankPages(count: number): GrayImage[] {
  return Array.from({ length: count }, (_, i) => {
    const [width, height] = [600, 180 + 60 * i];
    return { width, height, pixels: Uint8Array.from({ length: width * height }, (_, p) => ((p * 7919) % 97 < 3 ? 0 : 245)) };
  });
}

const callOf = (label: string) => calls.find((call) => call.label === label)!;

afterEach(() => {
  useRecognizerForTests(null);
  configureOcr(DEFAULT_OCR);
  configureAllowance({ buffer: allowanceBuffer(), cell: 0, native: 4 });
});

describe("pages of one file read at once", () => {
  it("a four-frame TIFF: up to the allowance in flight, one more drawn ahead, its text in page order with each frame's own page", async () => {
    configureOcr({ ...DEFAULT_OCR, engine: "tesseract" });
    configureAllowance({ buffer: allowanceBuffer(), cell: 0, native: 3 });
    standIn();
    const said: string[] = [];
    const parsing = parseBatch([{ fileName: "inbox/fax.tiff", bytes: toTiff(blankPages(4)) }], false, (_file, text) => said.push(text));
    await waitFor(() => calls.length === 3 && said.length === 4, () => `three pages in flight and the fourth drawn: ${calls.map((c) => c.label)}; ${said}`);
    assert.equal(nativeRunning(), 3, "each recognition holds a place in the allowance");
    assert.deepEqual(calls.map((c) => c.label), ["page 1", "page 2", "page 3"]);
    // Out of order: the later pages end first.
    callOf("page 3").resolve("words of the third frame");
    await waitFor(() => calls.length === 4, "the fourth page starting once a place is free");
    callOf("page 4").resolve("words of the fourth frame");
    callOf("page 2").resolve("words of the second frame");
    callOf("page 1").resolve("words of the first frame");
    const [outcome] = await parsing;
    assert.ok(outcome.ok && outcome.result.kind === "indexed", JSON.stringify(outcome));
    assert.deepEqual(
      outcome.result.chunks.map((chunk) => [chunk.page, chunk.text]),
      [[1, "words of the first frame"], [2, "words of the second frame"], [3, "words of the third frame"], [4, "words of the fourth frame"]],
    );
    assert.deepEqual(calls.map((c) => c.height), [180, 240, 300, 360], "each page's own picture");
    assert.deepEqual(said, [1, 2, 3, 4].map((k) => `OCR: page ${k} of 4 of fax.tiff`));
    assert.equal(nativeRunning(), 0);
  });

  it("a scanned PDF: two at once, texts on their pages", async () => {
    configureOcr({ ...DEFAULT_OCR, engine: "tesseract" });
    configureAllowance({ buffer: allowanceBuffer(), cell: 0, native: 2 });
    standIn();
    const parsing = extractText("scan.pdf", await imageOnlyPdf(blankPages(3)));
    await waitFor(() => calls.length === 2, "two pages in flight");
    callOf("page 2").resolve("second page");
    await waitFor(() => calls.length === 3, "the third page");
    callOf("page 3").resolve("third page");
    callOf("page 1").resolve("first page");
    const { segments } = await parsing;
    assert.deepEqual(segments?.map((s) => [s.page, s.text, s.scanned]), [[1, "first page", true], [2, "second page", true], [3, "third page", true]]);
    assert.ok(calls[0].height < calls[1].height && calls[1].height < calls[2].height, "each page's own picture");
  });

  it("a page that fails fails the file with its page and stops the pages still being read", async () => {
    configureOcr({ ...DEFAULT_OCR, engine: "tesseract" });
    configureAllowance({ buffer: allowanceBuffer(), cell: 0, native: 2 });
    standIn();
    const parsing = extractText("torn.tiff", toTiff(blankPages(3)));
    await waitFor(() => calls.length === 2, "two pages in flight");
    callOf("page 2").reject(new Error("Image too small to scale!! (2x36 vs min width of 3)"));
    await assert.rejects(parsing, (error: Error) => error instanceof ParseError && error.message === "OCR could not read page 2: Image too small to scale!! (2x36 vs min width of 3)");
    assert.equal(callOf("page 1").signal?.aborted, true, "page 1's process is stopped");
    assert.equal(calls.length, 2, "page 3 is never read");
    assert.equal(nativeRunning(), 0);
  });

  it("tesseract.js reads a file's pages one after another", async () => {
    configureOcr({ ...DEFAULT_OCR, engine: "tesseract.js" });
    standIn();
    const parsing = extractText("fax.tiff", toTiff(blankPages(2)));
    await waitFor(() => calls.length === 1, "the first page");
    // The second is drawn meanwhile, and waits: it starts only once the first has ended.
    calls[0].resolve("one");
    await waitFor(() => calls.length === 2, "the second page after the first");
    calls[1].resolve("two");
    assert.deepEqual((await parsing).segments?.map((s) => s.text), ["one", "two"]);
  });
});

describe("the OCR allowance shared by the parser threads", () => {
  it("a thread's first process always runs, more only within the pool's allowance; a thread's share ends with it", () => {
    const buffer = allowanceBuffer();
    configureAllowance({ buffer, cell: 0, native: 2 });
    assert.equal(takeNative(true), true);
    assert.equal(takeNative(false), true);
    assert.equal(takeNative(false), false, "the pool runs its allowance");
    configureAllowance({ buffer, cell: 1, native: 2 }); // another thread
    assert.equal(takeNative(false), false);
    assert.equal(takeNative(true), true, "its first page is never held up by another thread's scan");
    assert.equal(nativeRunning(), 3);
    releaseThreadCell(buffer, 0); // the pool ended thread 0
    assert.equal(nativeRunning(), 1);
  });

  it("one tesseract.js worker in the process: another thread has one once its owner gave it back or was ended", () => {
    const buffer = allowanceBuffer();
    configureAllowance({ buffer, cell: 0, native: 2 });
    assert.equal(takeWasmWorker(), true);
    assert.equal(takeWasmWorker(), true, "its owner keeps it");
    configureAllowance({ buffer, cell: 1, native: 2 });
    assert.equal(takeWasmWorker(), false);
    releaseThreadCell(buffer, 0);
    assert.equal(takeWasmWorker(), true);
  });

  it("a thread's tesseract.js worker ends once it has read no picture for a while, and lets another thread have one", async () => {
    configureOcr({ ...DEFAULT_OCR, engine: "tesseract.js" });
    const page = band(scanned((await renderPages(await realDocumentPdf(1), 200))[0], { seed: 4 }), 0.05, 0.2);
    const { text } = await extractText("scan.tiff", toTiff([page]));
    assert.match(text, /\p{L}{4}/u, "it read the picture");
    assert.equal(wasmWorkerHeld(), true, "kept for the next picture");
    await waitFor(() => !wasmWorkerHeld(), "the idle worker to end");
  });
});

const tesseractChildren = () => childrenNamed(process.pid, "tesseract");

describe("a cancelled parse", { skip: process.platform !== "linux" && "reads /proc" }, () => {
  const pool = new ParserPool({ size: 1, timeoutMs: 10 * 60_000 });
  after(() => pool.close());

  it("ends its parser thread and the tesseract processes it runs; the pool parses on", async () => {
    const pages = (await renderPages(await realDocumentPdf(2), 200)).map((page, i) => band(scanned(page, { seed: i + 2 }), 0.05, 0.6));
    const cancel = new AbortController();
    const parsing = pool.parse("scans/fax.tiff", toTiff([...pages, ...pages]), undefined, cancel.signal);
    parsing.catch(() => undefined);
    await waitFor(() => tesseractChildren().length > 0, "a tesseract process reading a page");
    cancel.abort();
    await assert.rejects(parsing, (error: Error) => error instanceof ParseError && /cancelled/.test(error.message));
    await waitFor(() => tesseractChildren().length === 0, () => `no tesseract process left: ${tesseractChildren()}`);
    assert.equal((await pool.parse("after.txt", new TextEncoder().encode("still parsing"))).kind, "indexed");
  });
});

describe("a tesseract process's time limit (Linux: its CPU time)", { skip: process.platform !== "linux" && "reads /proc" }, () => {
  function watched(command: string, args: string[], cpuMs: number, wallMs: number): Promise<string> {
    const child = spawn(command, args, { stdio: "ignore" });
    return new Promise((resolve) => {
      limitChild(child, { cpuMs, wallMs, onExceeded: resolve });
      child.on("close", () => resolve("exited"));
    });
  }

  it("a process busy past the limit is killed for its CPU time, however long the wall clock allows", async () => {
    assert.equal(await watched(process.execPath, ["-e", "for (;;);"], 300, 60 * 60_000), "0.3 s of CPU time");
  });

  it("a process that waits without using CPU is not held to the limit, only to the wall-clock backstop", async () => {
    assert.match(await watched("sleep", ["600"], 200, 1_500), /^1\.5 s \(it used 0(\.\d)? s of CPU\)$/);
  });
});

describe("a page's OCR limit in the parser pool on a busy machine", { skip: process.platform !== "linux" && "reads /proc" }, () => {
  // A stand-in `tesseract` first on the PATH of the pool's threads: one that waits without using
  // CPU (a page on a machine at load 28: long in wall time, short in CPU), one that computes on.
  const bin = fs.mkdtempSync(path.join(os.tmpdir(), "sluice-fake-tesseract-"));
  fs.writeFileSync(
    path.join(bin, "tesseract"),
    `#!/bin/sh
cat > /dev/null
case "$SLUICE_FAKE_OCR" in
  slow) sleep 14; echo "words read slowly" ;;
  busy) exec "${process.execPath}" -e "for (;;);" ;;
esac
`,
    { mode: 0o755 },
  );
  after(() => fs.rmSync(bin, { recursive: true, force: true }));

  /** A pool whose threads find the stand-in, behaving as `mode` says; a page may take three times `timeoutMs`. */
  async function parseWith(mode: string, timeoutMs: number): Promise<unknown> {
    const saved = { PATH: process.env.PATH, SLUICE_FAKE_OCR: process.env.SLUICE_FAKE_OCR };
    process.env.PATH = `${bin}${path.delimiter}${process.env.PATH}`;
    process.env.SLUICE_FAKE_OCR = mode;
    const pool = new ParserPool({ size: 1, timeoutMs, ocr: { ...DEFAULT_OCR, engine: "tesseract" } });
    try {
      const parsing = pool.parse("photo.png", toPng(blankPages(1)[0])); // the thread starts now, with this environment
      Object.assign(process.env, saved);
      if (saved.SLUICE_FAKE_OCR === undefined) delete process.env.SLUICE_FAKE_OCR;
      return await parsing.catch((error: Error) => error);
    } finally {
      Object.assign(process.env, saved);
      if (saved.SLUICE_FAKE_OCR === undefined) delete process.env.SLUICE_FAKE_OCR;
      await pool.close();
    }
  }

  it("a page that waits far past the limit in wall time while using little CPU is read", async () => {
    // 14 s against 6 s: the thread's notes (every 1 s) keep the pool's timer from firing, however busy the machine.
    const result = (await parseWith("slow", 2_000)) as { kind: string; chunks: Array<{ text: string }> };
    assert.equal(result.kind, "indexed", String(result));
    assert.equal(result.chunks[0].text, "words read slowly");
  });

  it("an engine computing past the limit is stopped by its CPU time, with the page", async () => {
    const error = await parseWith("busy", 1_000);
    assert.ok(error instanceof ParseError, String(error));
    assert.equal(error.message, "OCR could not read the image: timed out after 3 s of CPU time");
  });
});
