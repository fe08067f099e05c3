// What a parser thread does with a batch of files (parse.worker.ts is the thread's entry; this is
// apart so it can be tested on the calling thread).
import fs from "node:fs";
import { chunkSegments, chunkText } from "./chunker";
import { extractText } from "./extract-text";
import type { OcrAllowanceData } from "./ocr/ocr-allowance";
import { ocrContext } from "./ocr/ocr-context";
import { OCR_OFF, type OcrSettings } from "./ocr/ocr-settings";
import type { ParseResult } from "./parse-types";
import { releaseBytes } from "../../connectors/owned-bytes";

/** One file to parse, as it goes to a parser thread. */
export interface ParseFile {
  fileName: string;
  bytes: Uint8Array;
}

export type ParseOutcome = { ok: true; result: ParseResult } | { ok: false; message: string };

export interface ParseWorkerData {
  /** Set by the pool only when SLUICE_PARSER_TEST_HOOKS=1; see runTestHook. */
  testHooks: boolean;
  ocr: OcrSettings;
  /** The pool's OCR allowance and this thread's cell in it (ocr-allowance.ts). */
  allowance: OcrAllowanceData;
  /** What one page of OCR may take (ocr-host.ts). */
  ocrPageLimitMs: number;
}

/** Where a parse is, in words for the job's progress ("OCR: page 3 of 12 of scan-0041.pdf"): (file name as sent, text). */
export type ParseProgress = (fileName: string, text: string) => void;

async function parseFile(fileName: string, bytes: Uint8Array, progress: ParseProgress): Promise<ParseResult> {
  const start = performance.now();
  const base = fileName.split(/[\\/]/).pop() ?? fileName;
  const ocr = ocrContext((page, pages) => progress(fileName, pages > 1 ? `OCR: page ${page} of ${pages} of ${base}` : `OCR: ${base}`));
  const { title, text, segments, ocrSkipped } = await extractText(fileName, bytes, ocr);
  const extracted = performance.now();
  const chunks = segments?.some((segment) => /\S/.test(segment.text)) ? chunkSegments(segments) : chunkText(text);
  const timing = { parseSeconds: Math.max(0, (extracted - start) / 1000 - ocr.seconds), chunkSeconds: (performance.now() - extracted) / 1000, ocrSeconds: ocr.seconds };
  if (chunks.length === 0) return { kind: "skipped", reason: ocrSkipped ? OCR_OFF : "no text found", timing };
  return { kind: "indexed", title, chunks, timing };
}

/**
 * Test-only misbehaviour, so tests can prove the pool survives a bad parser. Enabled only when the
 * parent process had SLUICE_PARSER_TEST_HOOKS=1 when the pool was built; never set it in production.
 */
async function runTestHook(fileName: string, bytes: Uint8Array, progress: ParseProgress): Promise<void> {
  const base = fileName.split(/[\\/]/).pop() ?? "";
  if (base.startsWith("__sluice_test_ocr_hang__")) {
    // A page sent to OCR that never ends: its own time limit applies.
    progress(fileName, `OCR: page 1 of 1 of ${base}`);
    for (;;);
  }
  // What arrived: a test checks that a file comes over as a buffer of its own size, not its sender's whole buffer.
  if (base.startsWith("__sluice_test_buffer__")) throw new Error(`test hook: ${bytes.byteLength} bytes in a buffer of ${bytes.buffer.byteLength}`);
  if (base.startsWith("__sluice_test_crash__")) {
    // An exception outside any promise chain: uncaught, it takes the whole worker down.
    return new Promise<void>(() => {
      setImmediate(() => {
        throw new Error("test hook: parser crashed");
      });
    });
  }
  if (base.startsWith("__sluice_test_oom__")) {
    // 8 MB at a time: the heap's limit comes after a few collections, not hundreds (seconds of a loaded core).
    const hog: number[][] = [];
    for (;;) hog.push(new Array<number>(1_000_000).fill(0.5));
  }
  if (base.startsWith("__sluice_test_wait__")) {
    // Busy until the test creates the file named by this one's contents: a slow parse that ends when the test says, not after a time.
    const released = new TextDecoder().decode(bytes);
    while (!fs.existsSync(released)) await new Promise((resolve) => setTimeout(resolve, 10));
    throw new Error("test hook: released");
  }
  if (base.startsWith("__sluice_test_hang__")) {
    for (;;);
  }
}

/**
 * One outcome per file, in order. Each file's bytes are released once it is parsed (its text is
 * out, as strings of their own): the memory goes now, not at this thread's next full collection.
 * The sender keeps its own copy for a retry.
 */
export async function parseBatch(files: readonly ParseFile[], testHooks = false, progress: ParseProgress = () => undefined): Promise<ParseOutcome[]> {
  const results: ParseOutcome[] = [];
  for (const file of files) {
    try {
      if (testHooks) await runTestHook(file.fileName, file.bytes, progress);
      results.push({ ok: true, result: await parseFile(file.fileName, file.bytes, progress) });
    } catch (err) {
      results.push({ ok: false, message: err instanceof Error ? err.message : String(err) });
    } finally {
      releaseBytes(file.bytes);
    }
  }
  return results;
}
