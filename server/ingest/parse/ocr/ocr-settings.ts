/** How the parser threads read text from pictures (config.ts: OCR, OCR_LANGUAGES, OCR_ENGINE). */
export interface OcrSettings {
  enabled: boolean;
  /** Tesseract language codes, in order ("eng", "deu"): each page is read with all of them. */
  languages: string[];
  /** "auto": the `tesseract` command where it is installed with every language, else tesseract.js. */
  engine: "auto" | "tesseract" | "tesseract.js";
}

export const DEFAULT_OCR: OcrSettings = { enabled: true, languages: ["eng"], engine: "auto" };

/** Why a file that needs OCR was skipped with OCR=off (the job's skip list says it). */
export const OCR_OFF = "needs OCR, which is off (OCR=off)";
