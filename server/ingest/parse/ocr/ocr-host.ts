/**
 * What OCR on a parser thread tells the pool beside a page's progress, and the limit it keeps
 * (parse.worker.ts sets them; outside a pool they do nothing and the default limit holds):
 * - `alive`: the thread is waiting on an engine that is still within its limits (a `tesseract`
 *   process using less CPU than a page may, the tesseract.js worker held by another thread), so
 *   the pool's wall-clock limit on the thread starts again (decision 0496);
 * - `child`: a `tesseract` process started or ended, so the pool can end the ones still running
 *   when it ends the thread (a hung parse, a cancelled job, the pool closing).
 */
export interface OcrHost {
  alive(): void;
  child(pid: number, running: boolean): void;
  /** What one page may take: CPU time of a `tesseract` process, wall time elsewhere. */
  pageLimitMs: number;
}

/** The per-page limit outside a pool: the pool's own default (three times its 60 s). */
export const DEFAULT_PAGE_LIMIT_MS = 180_000;

let host: OcrHost = { alive: () => undefined, child: () => undefined, pageLimitMs: DEFAULT_PAGE_LIMIT_MS };

export function configureOcrHost(next: OcrHost): void {
  host = next;
}

export function ocrHost(): OcrHost {
  return host;
}
