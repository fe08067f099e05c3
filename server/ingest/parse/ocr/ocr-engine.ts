import { ParseError } from "../parse-types";
import { nativeLanguages, nativeRecognize } from "./native-tesseract";
import { DEFAULT_OCR, type OcrSettings } from "./ocr-settings";
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

/**
 * The text of one picture (a file's bytes in a format Leptonica reads, or a PGM). A picture
 * neither engine can read fails the file with which page it was.
 */
export async function recognize(image: Uint8Array, page: PageRef, dpi: number | null = null): Promise<string> {
  const engine = await ocrEngine();
  try {
    return engine === "tesseract" ? await nativeRecognize(image, settings.languages, dpi) : await wasmRecognize(image, settings.languages, dpi);
  } catch (error) {
    const reason = (error instanceof Error ? error.message : String(error)).replace(/^Error:\s*/, "");
    throw new ParseError(`OCR could not read ${page.label}: ${reason}`);
  }
}
