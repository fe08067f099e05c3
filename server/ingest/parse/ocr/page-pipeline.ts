import type { OcrContext } from "./ocr-context";

/** One page's recognition, handed over once the page is drawn; `signal` aborts when the file fails or stops. */
export interface PageWork {
  /** 1-based. */
  page: number;
  recognize(signal: AbortSignal): Promise<string>;
}

/** Where a recognition may run: `take(first)` asks for a place (the file's first running one always gets one), `giveBack` returns it. */
export interface Admission {
  take(first: boolean): boolean;
  giveBack(): void;
}

/**
 * The pages of one file read by OCR with several recognitions at once
 * (docs/decisions/0494-pages-of-a-file-ocred-at-once.md): the reader draws a page, hands it to
 * add(), and draws the next while recognitions run; add() waits while `ahead` drawn pages
 * already wait for a place, so at most that many pictures are held beyond the running ones. The
 * first page that fails stops the others (their processes are killed) and fails the file;
 * finish() gives the texts by page. The context's OCR seconds count the time at least one
 * recognition ran, not their sum.
 */
export class PagePipeline {
  private readonly waiting: PageWork[] = [];
  private running = 0;
  private readonly texts = new Map<number, string>();
  private failure: { error: unknown } | null = null;
  private readonly stopper = new AbortController();
  private wake: (() => void) | null = null;
  private busySince = 0;

  constructor(
    private readonly admission: Admission,
    private readonly ocr: OcrContext,
    private readonly ahead = 1,
  ) {}

  /** Queues a drawn page; resolves when the next may be drawn, rejects once a page failed. */
  async add(work: PageWork): Promise<void> {
    this.throwIfFailed();
    this.waiting.push(work);
    this.pump();
    while (this.waiting.length >= this.ahead && !this.failure) await this.changed();
    this.throwIfFailed();
  }

  /** The text of every page added, by page, once all are read; rejects with the first page that failed. */
  async finish(): Promise<Map<number, string>> {
    while ((this.waiting.length > 0 || this.running > 0) && !this.failure) await this.changed();
    this.throwIfFailed();
    return this.texts;
  }

  /** Stops what runs (the file failed elsewhere, or was read whole): nothing is left running behind it. */
  stop(): void {
    this.waiting.length = 0;
    this.stopper.abort();
  }

  /** Whether no recognition runs now (drawing a page then is OCR time of its own). */
  get idle(): boolean {
    return this.running === 0;
  }

  private throwIfFailed(): void {
    if (this.failure) throw this.failure.error;
  }

  private changed(): Promise<void> {
    return new Promise((resolve) => (this.wake = resolve));
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  private pump(): void {
    while (this.waiting.length > 0 && !this.failure && this.admission.take(this.running === 0)) {
      const work = this.waiting.shift()!;
      if (this.running++ === 0) this.busySince = performance.now();
      void this.run(work);
    }
  }

  private async run(work: PageWork): Promise<void> {
    try {
      const text = await work.recognize(this.stopper.signal);
      this.texts.set(work.page, text);
    } catch (error) {
      if (!this.failure && !this.stopper.signal.aborted) {
        this.failure = { error };
        this.stop();
      }
    } finally {
      this.admission.giveBack();
      if (--this.running === 0) this.ocr.seconds += (performance.now() - this.busySince) / 1000;
      this.pump();
      this.notify();
    }
  }
}
