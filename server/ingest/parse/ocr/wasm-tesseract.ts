import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/**
 * tesseract.js (Tesseract compiled to WebAssembly, in a worker thread of its own) with the
 * language data of the `@tesseract.js-data/<lang>` npm packages: `langPath` is always a local
 * folder, so it never falls back to its CDN and nothing is downloaded at run time. One worker
 * per parser thread, made on the first picture and kept (loading the data takes a second).
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

/** The text of one picture (PGM, PNG, JPEG, BMP, WebP). */
export async function wasmRecognize(image: Uint8Array, languages: string[], dpi: number | null): Promise<string> {
  const key = languages.join("+");
  if (!current || current.languages !== key) {
    const old = current;
    current = { languages: key, worker: startWorker(languages) };
    current.worker.catch(() => (current = null));
    if (old) void old.worker.then((w) => w.terminate()).catch(() => undefined);
  }
  const worker = await current.worker;
  // debug_file: Tesseract's notes ("Estimating resolution as 262") are not the server's log.
  await worker.setParameters({ tessedit_pageseg_mode: "3", debug_file: "/dev/null", ...(dpi ? { user_defined_dpi: String(dpi) } : {}) });
  const { data } = await worker.recognize(Buffer.from(image.buffer, image.byteOffset, image.byteLength));
  return data.text;
}

/** Ends this thread's worker (its memory goes back); the next picture starts another. */
export async function stopWasmTesseract(): Promise<void> {
  const old = current;
  current = null;
  if (old) await (await old.worker).terminate();
}
