import { ParseError } from "../parse-types";
import { nativeLanguages, nativeRecognize } from "./native-tesseract";
import { giveBackNative, takeNative } from "./ocr-allowance";
import type { OcrContext } from "./ocr-context";
import { DEFAULT_OCR, type OcrSettings } from "./ocr-settings";
import { PagePipeline, type Admission } from "./page-pipeline";
import { wasmRecognize } from "./wasm-tesseract";

/** This parser thread's OCR settings (parse.worker.ts sets them from the pool's). */
let settings: OcrSettings = DEFAULT_OCR;
let chosen: Promise<OcrEngineName> | null = null;

export type OcrEngineName = "tesseract" | "tesseract.js";

export function configureOcr(next: OcrSettings): void {
  settings = next;
  chosen = null;
}

export function ocrSettings(): OcrSettings {
  return settings;
}

/** Which engine reads pictures on this thread: OCR_ENGINE, or with "auto" the command when it has every language. */
export function ocrEngine(): Promise<OcrEngineName> {
  chosen ??= (async () => {
    if (settings.engine !== "auto") return settings.engine;
    const native = await nativeLanguages();
    return native && settings.languages.every((lang) => native.has(lang)) ? "tesseract" : "tesseract.js";
  })();
  return chosen;
}

/** Where one page of a file is, for a failure's words: "page 3" (or "the image"). */
export interface PageRef {
  label: string;
}

/** Reads one picture: the engines, or a test's stand-in (useRecognizerForTests). */
export type Recognizer = (image: Uint8Array, page: PageRef, dpi: number | null, signal?: AbortSignal) => Promise<string>;

let standIn: Recognizer | null = null;

/** Tests only: pictures go to `recognizer` instead of an engine (null: the engines again). */
export function useRecognizerForTests(recognizer: Recognizer | null): void {
  standIn = recognizer;
}

/**
 * The text of one picture (a file's bytes in a format Leptonica reads, or a PGM). A picture
 * neither engine can read fails the file with which page it was.
 */
export async function recognize(image: Uint8Array, page: PageRef, dpi: number | null = null, signal?: AbortSignal): Promise<string> {
  const engine = await ocrEngine();
  try {
    if (standIn) return await standIn(image, page, dpi, signal);
    return engine === "tesseract" ? await nativeRecognize(image, settings.languages, dpi, signal) : await wasmRecognize(image, settings.languages, dpi);
  } catch (error) {
    const reason = (error instanceof Error ? error.message : String(error)).replace(/^Error:\s*/, "");
    throw new ParseError(`OCR could not read ${page.label}: ${reason}`);
  }
}

/** The `tesseract` command: several processes per file, within the pool's allowance. */
const NATIVE_ADMISSION: Admission = { take: takeNative, giveBack: giveBackNative };
/** tesseract.js: one worker per thread reads one picture at a time, so a file's pages go one after another. */
const ONE_AT_A_TIME: Admission = { take: (first) => first, giveBack: () => undefined };

/**
 * Pages drawn and waiting for a recognition, beyond the running ones: one keeps a process
 * busy the moment another ends (drawing takes a fraction of reading), and holds one picture
 * (8 MB for a Letter page at 300 dpi) more.
 */
const PAGES_DRAWN_AHEAD = 1;

/** The pipeline that reads a file's pages with this thread's engine (page-pipeline.ts). */
export async function pagePipeline(ocr: OcrContext): Promise<PagePipeline> {
  return new PagePipeline((await ocrEngine()) === "tesseract" ? NATIVE_ADMISSION : ONE_AT_A_TIME, ocr, PAGES_DRAWN_AHEAD);
}
