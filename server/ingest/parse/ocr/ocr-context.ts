/** What a reader of pictures tells about a file while it reads it: the page it starts on, and the time it took. */
export interface OcrContext {
  /** A page (1-based) of `pages` goes to OCR now. */
  page(page: number, pages: number): void;
  /** Seconds spent in OCR for this file so far (rendering and recognition). */
  seconds: number;
}

export function ocrContext(onPage: (page: number, pages: number) => void = () => undefined): OcrContext {
  return { page: onPage, seconds: 0 };
}

/** Times `work` into the context's OCR seconds. */
export async function timedOcr<T>(context: OcrContext, work: () => Promise<T>): Promise<T> {
  const start = performance.now();
  try {
    return await work();
  } finally {
    context.seconds += (performance.now() - start) / 1000;
  }
}

/** Tesseract ends each page with a form feed; lines of only spaces are blank lines. */
export function cleanOcrText(text: string): string {
  return text.replace(/\f/g, "\n").replace(/[ \t]+\n/g, "\n").trim();
}
