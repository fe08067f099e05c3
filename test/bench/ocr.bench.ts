import fs from "node:fs";
import path from "node:path";
import { extractText } from "../../server/ingest/parse/extract-text";
import { configureOcr } from "../../server/ingest/parse/ocr/ocr-engine";
import { DEFAULT_OCR } from "../../server/ingest/parse/ocr/ocr-settings";
import { stopWasmTesseract } from "../../server/ingest/parse/ocr/wasm-tesseract";
import { client, createGroup, signUp, waitForJobEnd } from "../fixtures/http-client";
import { addPictureFilePage, imageOnlyPdf, realDocumentPdf, renderPages, scanned, toPng, wordsOf } from "../fixtures/scans";
import { startSluice, tempDir } from "../fixtures/sluice-server";
import { CORES, peakRssMb } from "./measure";
import { JOB_POLL_MS, tesseractCommand } from "./ocr-reference";

/**
 * OCR (issue 35): pages per second against the `tesseract` command on the same pages, one
 * thread each and all cores, Sluice's peak memory, and how much of what the command reads a
 * Sluice search finds, on the right page. The pages: the user guide drawn at 200 dpi as scans
 * (`--ocr [--pages N]`), or real scanned pictures from a folder (`--ocr --scans DIR`: PNG or JPEG,
 * each one page), which the issue's target is about.
 */
export interface OcrBenchOptions {
  pages: number;
  scansDir?: string;
}

interface Timed {
  seconds: number;
  texts: string[];
}

/** `tesseract` on each picture, `parallel` at a time, one thread each (ocr-reference.ts): what it reads and the wall time. */
async function commandRun(files: string[], parallel: number): Promise<Timed> {
  const texts: string[] = new Array(files.length).fill("");
  const start = performance.now();
  let next = 0;
  const one = async (): Promise<void> => {
    while (next < files.length) {
      const i = next++;
      texts[i] = await tesseractCommand(files[i]);
    }
  };
  await Promise.all(Array.from({ length: parallel }, one));
  return { seconds: (performance.now() - start) / 1000, texts };
}

/** Sluice's own reading of each picture, one after another on this thread, with one engine. */
async function sluiceRun(files: string[], engine: "tesseract" | "tesseract.js"): Promise<Timed> {
  configureOcr({ ...DEFAULT_OCR, engine });
  const start = performance.now();
  const texts: string[] = [];
  for (const file of files) texts.push((await extractText(file, new Uint8Array(fs.readFileSync(file)))).text);
  const seconds = (performance.now() - start) / 1000;
  configureOcr(DEFAULT_OCR);
  // Its worker thread would keep the bench process alive.
  await stopWasmTesseract();
  return { seconds, texts };
}


export async function runOcrBench(opts: OcrBenchOptions): Promise<void> {
  const dir = tempDir("sluice-ocr-bench-");
  const pagesDir = path.join(dir, "pages");
  fs.mkdirSync(pagesDir, { recursive: true });
  let files: string[];
  if (opts.scansDir) {
    files = fs.readdirSync(opts.scansDir).filter((name) => /\.(png|jpe?g)$/i.test(name)).sort().slice(0, opts.pages).map((name) => path.join(opts.scansDir!, name));
  } else {
    const pages = (await renderPages(await realDocumentPdf(opts.pages), 200)).map((page, i) => scanned(page, { degrees: i % 2 ? -1 : 1, seed: i + 1 }));
    files = pages.map((page, i) => {
      const file = path.join(pagesDir, `page-${String(i + 1).padStart(3, "0")}.png`);
      fs.writeFileSync(file, toPng(page));
      return file;
    });
  }
  if (files.length === 0) throw new Error("no pictures to read");
  const n = files.length;
  const rate = (t: Timed) => `${(n / t.seconds).toFixed(3)} pages/s (${(t.seconds / n).toFixed(2)} s/page)`;
  const row = (name: string, value: string) => process.stdout.write(`| ${name} | ${value} |\n`);
  process.stdout.write(`\nOCR bench: ${n} pages${opts.scansDir ? ` from ${opts.scansDir}` : " (the user guide drawn at 200 dpi as scans)"}, ${CORES} cores\n\n| measure | value |\n|---|---|\n`);

  const reference = await commandRun(files, 1);
  row("`tesseract` command, one thread, one page after another", rate(reference));
  row("`tesseract` command, all cores", rate(await commandRun(files, CORES)));
  row("Sluice parser, native engine, one thread", rate(await sluiceRun(files, "tesseract")));
  row("Sluice parser, tesseract.js, one thread", rate(await sluiceRun(files, "tesseract.js")));

  // A whole ingestion of the same pages as one scanned PDF (its page numbers are what a hit says).
  const pictures = await Promise.all(files.map(async (file) => (await renderPages(await imageOnlyPdfOf(file), 200))[0]));
  const sourceDir = path.join(dir, "source");
  fs.mkdirSync(sourceDir);
  fs.writeFileSync(path.join(sourceDir, "scan.pdf"), await imageOnlyPdf(pictures));
  const server = await startSluice({ env: { FOLDER_SOURCE_ROOTS: dir } });
  try {
    const request = client(server.api);
    const owner = await signUp(request, "ocr-bench");
    const group = await createGroup(request, owner.token);
    const created = await request("POST", `/data_sources/folder/${group}`, { token: owner.token, body: { data_source: { data_source_name: "Scans" }, folder_source: { path: sourceDir } } });
    const start = performance.now();
    await request("POST", `/data_pipelines/${created.body.pipeline.id}/ingest`, { token: owner.token });
    const job = await waitForJobEnd(request, owner.token, created.body.pipeline.id, 24 * 3600_000, JOB_POLL_MS);
    const seconds = (performance.now() - start) / 1000;
    row("Sluice ingestion of the pages as one scanned PDF (all cores)", `${rate({ seconds, texts: [] })}; job ${job.status}, ocr_s ${job.timings?.ocr_s}`);
    row("ingestion time against the command's one-thread time (target <= 1)", (seconds / reference.seconds).toFixed(2));
    row("Sluice server peak memory (VmHWM; native tesseract processes apart)", `${peakRssMb(server.child.pid!).toFixed(0)} MB (target < 400)`);

    // Words the command reads on each page, searched in Sluice: found at all, and on that page (words of one page only).
    const pageOf = new Map<string, Set<number>>();
    reference.texts.forEach((text, i) => {
      for (const word of wordsOf(text, 3)) pageOf.set(word, (pageOf.get(word) ?? new Set()).add(i + 1));
    });
    let found = 0;
    let unique = 0;
    let rightPage = 0;
    const words = [...pageOf.keys()];
    for (const word of words) {
      const res = await request("GET", `/collections/${created.body.pipeline.collection_id}/search?q=${encodeURIComponent(`"${word}"`)}&top_k=50`, { token: owner.token });
      const hits = (res.body?.results ?? []) as Array<{ page: number | null }>;
      if (hits.length > 0) found++;
      const pages = pageOf.get(word)!;
      if (pages.size !== 1) continue;
      unique++;
      if (hits.some((hit) => hit.page !== null && pages.has(hit.page))) rightPage++;
    }
    row("words the command reads that a Sluice search finds (target >= 95 %)", `${((100 * found) / Math.max(1, words.length)).toFixed(1)} % of ${words.length}`);
    row("of the words of one page only, a hit on that page (target >= 98 %)", `${((100 * rightPage) / Math.max(1, unique)).toFixed(1)} % of ${unique}`);
  } finally {
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * One picture as a one-page image-only PDF (to be drawn again for the scanned PDF the ingestion
 * reads), taken as 200 dpi, the resolution it is drawn back at: its own pixels come back.
 */
async function imageOnlyPdfOf(file: string): Promise<Uint8Array> {
  const { PDFDocument } = await import("pdf-lib");
  const doc = await PDFDocument.create();
  await addPictureFilePage(doc, file, 200);
  return doc.save();
}
