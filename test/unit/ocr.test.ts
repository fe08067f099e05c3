import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { extractText } from "../../server/ingest/parse/extract-text";
import { configureOcr, ocrEngine } from "../../server/ingest/parse/ocr/ocr-engine";
import { DEFAULT_OCR, OCR_OFF } from "../../server/ingest/parse/ocr/ocr-settings";
import { stopWasmTesseract } from "../../server/ingest/parse/ocr/wasm-tesseract";
import { parseBatch } from "../../server/ingest/parse/parse-batch";
import { ParseError } from "../../server/ingest/parse/parse-types";
import type { GrayImage } from "../../server/ingest/parse/ocr/gray-image";
import { band, imageOnlyPdf, mixedPdf, realDocumentPdf, renderPages, scanned, toBmp, toGif, toJpeg, toPng, toTiff, wordsOf } from "../fixtures/scans";

// OCR on pictures made from a real document of this repository (its user guide set as PDF
// pages), drawn at a scanner's 200 dpi, turned a little and speckled. Each picture is a band of
// a page (a third), so a test reads a few lines, not whole pages.
let textPdf: Uint8Array;
/** The words of each page's text layer. */
let pageWords: Set<string>[];
let scans: GrayImage[];

before(async () => {
  textPdf = await realDocumentPdf(3);
  const { segments } = await extractText("guide.pdf", textPdf);
  pageWords = segments!.map((segment) => wordsOf(segment.text, 6));
  scans = (await renderPages(textPdf, 200)).map((page, i) => band(scanned(page, { degrees: i % 2 ? -1.1 : 1.3, seed: i + 3 }), 0.05, 0.38));
});
after(async () => {
  configureOcr(DEFAULT_OCR);
  await stopWasmTesseract(); // its worker thread would keep the test process alive
});

/** How many of the words OCR read (6 letters or more) are words of that page's text layer, and of no other page only. */
function readFrom(text: string, page: number): { words: number; share: number } {
  const read = [...wordsOf(text, 6)];
  const onPage = read.filter((word) => pageWords[page].has(word));
  return { words: onPage.length, share: onPage.length / Math.max(1, read.length) };
}

function assertReadsPage(text: string, page: number, what: string): void {
  const { words, share } = readFrom(text, page);
  assert.ok(words >= 10 && share >= 0.85, `${what}: ${words} words of page ${page + 1} (${Math.round(share * 100)} % of those read): ${text.slice(0, 300)}`);
}

describe("OCR of pictures", () => {
  it("reads PNG, JPEG, GIF (its first frame) and BMP pictures; their text is marked as from a scan", async () => {
    for (const [name, bytes] of [["scan.png", toPng(scans[0])], ["scan.jpg", toJpeg(scans[0])], ["scan.gif", toGif(scans[0])], ["scan.bmp", toBmp(scans[0])]] as const) {
      const { text, segments } = await extractText(name, bytes);
      assertReadsPage(text, 0, name);
      assert.deepEqual(segments?.map((s) => [s.page, s.location, s.scanned]), [[null, null, true]], name);
    }
  });

  it("reads every frame of a multi-page TIFF as its own page", async () => {
    const { segments } = await extractText("fax.tiff", toTiff(scans.slice(0, 3)));
    assert.deepEqual(segments?.map((s) => [s.page, s.location, s.scanned]), [[1, "page 1", true], [2, "page 2", true], [3, "page 3", true]]);
    for (const [i, segment] of segments!.entries()) assertReadsPage(segment.text, i, `frame ${i + 1}`);
  });

  it("reads a TIFF of one frame (the command reads the file itself, tesseract.js its decoded pixels) as page 1", async () => {
    const tiff = toTiff([scans[1]]);
    for (const engine of ["tesseract", "tesseract.js"] as const) {
      configureOcr({ ...DEFAULT_OCR, engine });
      const { segments } = await extractText("scan.tif", tiff);
      assert.deepEqual(segments?.map((s) => [s.page, s.location, s.scanned]), [[1, "page 1", true]], engine);
      assertReadsPage(segments![0].text, 1, engine);
    }
    configureOcr(DEFAULT_OCR);
  });

  it("says which page it reads, as the job's progress shows it, and times OCR on its own", async () => {
    const said: string[] = [];
    const [outcome] = await parseBatch([{ fileName: "inbox/fax-0041.tiff", bytes: toTiff(scans.slice(1, 3)) }], false, (file, text) => said.push(`${file}: ${text}`));
    assert.deepEqual(said, ["inbox/fax-0041.tiff: OCR: page 1 of 2 of fax-0041.tiff", "inbox/fax-0041.tiff: OCR: page 2 of 2 of fax-0041.tiff"]);
    assert.ok(outcome.ok && outcome.result.kind === "indexed", JSON.stringify(outcome));
    assert.ok((outcome.result.timing?.ocrSeconds ?? 0) > 0);
    assert.ok(outcome.result.kind === "indexed" && outcome.result.chunks.every((chunk) => chunk.scanned && (chunk.page === 1 || chunk.page === 2)));
  });

  it("a picture that cannot be read fails its file with the page and the reason", async () => {
    const png = toPng(scans[0]);
    await assert.rejects(extractText("torn.png", png.slice(0, 3000)), (error: Error) => error instanceof ParseError && /^OCR could not read the image: /.test(error.message));
    const tiff = toTiff(scans.slice(0, 2));
    await assert.rejects(extractText("torn.tif", tiff.slice(0, 64)), (error: Error) => error instanceof ParseError && /TIFF/.test(error.message));
  });

  it("uses the tesseract command where it has the languages (it is installed here), else tesseract.js", async () => {
    configureOcr({ ...DEFAULT_OCR, engine: "auto" });
    assert.equal(await ocrEngine(), "tesseract");
    configureOcr({ ...DEFAULT_OCR, languages: ["eng", "zzz"] });
    assert.equal(await ocrEngine(), "tesseract.js", "a language the command lacks");
    configureOcr(DEFAULT_OCR);
  });
});

describe("scanned PDF pages", () => {
  it("OCRs the pages without a text layer (a scanner's stamp is not one) and keeps the text layer of the others", async () => {
    const pdf = await mixedPdf(textPdf, [0], [scans[1]]);
    const stamped = await imageOnlyPdf([scans[2]], { stamp: "Scanned with ScanStation 3000 on 2024-05-02" });
    const mixed = await extractText("mixed.pdf", pdf);
    assert.deepEqual(mixed.segments?.map((s) => [s.page, s.location, s.scanned]), [[1, "page 1", false], [2, "page 2", true]]);
    assert.ok(readFrom(mixed.segments![0].text, 0).share === 1, "the text page as its text layer says");
    assertReadsPage(mixed.segments![1].text, 1, "the scanned page");
    const stamp = await extractText("stamped.pdf", stamped);
    assert.equal(stamp.segments?.[0].scanned, true);
    assertReadsPage(stamp.text, 2, "a page with a scanner's stamp");
  });

  it("with OCR off, pictures and image-only PDFs are skipped for that reason, and a mixed PDF keeps its text pages", async () => {
    configureOcr({ ...DEFAULT_OCR, enabled: false });
    try {
      const files = [
        { fileName: "scan.png", bytes: toPng(scans[0]) },
        { fileName: "scan.pdf", bytes: await imageOnlyPdf([scans[0]]) },
        { fileName: "mixed.pdf", bytes: await mixedPdf(textPdf, [0], [scans[1]]) },
      ];
      const [png, pdf, mixed] = await parseBatch(files);
      assert.deepEqual(png, { ok: true, result: { kind: "skipped", reason: OCR_OFF, timing: (png as { result: { timing: unknown } }).result.timing } });
      assert.ok(pdf.ok && pdf.result.kind === "skipped" && pdf.result.reason === OCR_OFF, JSON.stringify(pdf));
      assert.ok(mixed.ok && mixed.result.kind === "indexed");
      assert.ok(mixed.result.chunks.every((chunk) => chunk.page === 1 && !chunk.scanned));
    } finally {
      configureOcr(DEFAULT_OCR);
    }
  });
});
