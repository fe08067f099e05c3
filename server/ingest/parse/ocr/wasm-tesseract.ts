import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { giveBackWasmWorker, takeWasmWorker, wasmWorkerChange } from "./ocr-allowance";
import { ocrHost } from "./ocr-host";

/**
 * tesseract.js (Tesseract compiled to WebAssembly, in a worker thread of its own) with the
 * language data of the `@tesseract.js-data/<lang>` npm packages: `langPath` is always a local
 * folder, so it never falls back to its CDN and nothing is downloaded at run time. One worker
 * in the whole process (docs/decisions/0495-tesseract-js-memory-bounded.md): a parser thread
 * makes it on its first picture when no other thread has one, and ends it once it has read no
 * picture for IDLE_STOP_MS; a thread with a picture meanwhile waits for it (loading the data
 * takes a second, so it is kept between pictures, not made per page).
 */

interface TesseractWorker {
  recognize(image: Uint8Array | Buffer): Promise<{ data: { text: string } }>;
  setParameters(params: Record<string, string>): Promise<unknown>;
  terminate(): Promise<unknown>;
}

let current: { languages: string; worker: Promise<TesseractWorker> } | null = null;

/** The traineddata file shipped for `language`, or null when its package is not installed. */
export function wasmLanguageData(language: string): string | null {
  try {
    const dir = path.dirname(require.resolve(`@tesseract.js-data/${language}/package.json`));
    const file = path.join(dir, "4.0.0_best_int", `${language}.traineddata.gz`);
    return fs.existsSync(file) ? file.replace(`app.asar${path.sep}`, `app.asar.unpacked${path.sep}`) : null;
  } catch {
    return null;
  }
}

/**
 * One folder holding every language's data. tesseract.js takes one `langPath` (its objects of
 * bytes are named by the bytes in 7.0's initialize), and each language is a package of its own:
 * with one language that package's folder; with several, a copy of their files in a folder under
 * the system's temporary folder, made once.
 */
function languageFolder(languages: string[]): string {
  const files = languages.map((code) => {
    const file = wasmLanguageData(code);
    if (!file) throw new Error(`no language data for "${code}" (install the npm package @tesseract.js-data/${code}, or the tesseract command with that language)`);
    return file;
  });
  const folders = new Set(files.map((file) => path.dirname(file)));
  if (folders.size === 1) return [...folders][0];
  const dir = path.join(os.tmpdir(), `sluice-ocr-${languages.join("+")}`);
  fs.mkdirSync(dir, { recursive: true });
  for (const file of files) if (!fs.existsSync(path.join(dir, path.basename(file)))) fs.copyFileSync(file, path.join(dir, path.basename(file)));
  return dir;
}

async function startWorker(languages: string[]): Promise<TesseractWorker> {
  const { createWorker, OEM } = require("tesseract.js") as typeof import("tesseract.js");
  const langPath = languageFolder(languages);
  // cacheMethod "none": no copy of the data is written to (or read from) the working folder.
  const worker = await createWorker(languages, OEM.LSTM_ONLY, { langPath, cacheMethod: "none", gzip: true, errorHandler: () => undefined });
  return worker as unknown as TesseractWorker;
}

/**
 * A thread's worker is ended after this long without a picture, so another thread can have one:
 * long enough to be kept across a folder of pictures (each ends a few hundred ms before the
 * next file's first reaches it), short against a job.
 */
export const IDLE_STOP_MS = 5_000;
/** How often a thread waiting for the worker looks again, and tells the pool it is not hung. */
const WAIT_LOOK_MS = 1_000;

let idleTimer: NodeJS.Timeout | null = null;

/** This thread's worker for `languages`, once no other thread has one. */
async function workerFor(languages: string[]): Promise<TesseractWorker> {
  const key = languages.join("+");
  if (current && current.languages !== key) await stopWasmTesseract();
  if (!current) {
    while (!takeWasmWorker()) {
      ocrHost().alive(); // waiting on another thread's engine, which has limits of its own
      await wasmWorkerChange(WAIT_LOOK_MS);
    }
    const started = { languages: key, worker: startWorker(languages) };
    current = started;
    started.worker.catch(() => {
      if (current !== started) return;
      current = null;
      giveBackWasmWorker();
    });
  }
  return current.worker;
}

/** The text of one picture (PGM, PNG, JPEG, BMP, WebP). */
export async function wasmRecognize(image: Uint8Array, languages: string[], dpi: number | null): Promise<string> {
  if (idleTimer) clearTimeout(idleTimer);
  idleTimer = null;
  try {
    const worker = await workerFor(languages);
    // debug_file: Tesseract's notes ("Estimating resolution as 262") are not the server's log.
    await worker.setParameters({ tessedit_pageseg_mode: "3", debug_file: "/dev/null", ...(dpi ? { user_defined_dpi: String(dpi) } : {}) });
    const { data } = await worker.recognize(Buffer.from(image.buffer, image.byteOffset, image.byteLength));
    return data.text;
  } finally {
    idleTimer = setTimeout(() => void stopWasmTesseract().catch(() => undefined), IDLE_STOP_MS);
    idleTimer.unref(); // an idle worker must not keep a process alive (terminate below ends its thread)
  }
}

/** Ends this thread's worker (its memory goes back) and lets another thread have one; the next picture starts another. */
export async function stopWasmTesseract(): Promise<void> {
  if (idleTimer) clearTimeout(idleTimer);
  idleTimer = null;
  const old = current;
  current = null;
  if (!old) return;
  try {
    await (await old.worker).terminate();
  } finally {
    // Unless a picture came meanwhile and this thread made another worker: that one keeps the place.
    if (!current) giveBackWasmWorker();
  }
}
