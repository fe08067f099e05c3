// Worker thread entry for ParserPool (parser-pool.ts): parses and chunks a batch of files per message.
// Runs compiled (dist/.../parse.worker.js) or from source under tsx (parse.worker.ts).
import { parentPort, workerData } from "node:worker_threads";
import { chunkText } from "./chunker";
import { extractText } from "./extract-text";
import type { ParseResult } from "./parse-types";
import { startHeapTrace } from "../../diagnostics/heap-trace";

export interface ParseRequest {
  id: number;
  files: Array<{ fileName: string; bytes: Uint8Array }>;
}

export type ParseOutcome = { ok: true; result: ParseResult } | { ok: false; message: string };

/** One outcome per file of the request, in its order. */
export interface ParseReply {
  id: number;
  results: ParseOutcome[];
}

export interface ParseWorkerData {
  /** Set by the pool only when SLUICE_PARSER_TEST_HOOKS=1; see runTestHook. */
  testHooks: boolean;
}

async function parseFile(fileName: string, bytes: Uint8Array): Promise<ParseResult> {
  const start = performance.now();
  const { title, text } = await extractText(fileName, bytes);
  const extracted = performance.now();
  const chunks = chunkText(text);
  const timing = { parseSeconds: (extracted - start) / 1000, chunkSeconds: (performance.now() - extracted) / 1000 };
  return chunks.length === 0 ? { kind: "skipped", reason: "no text found", timing } : { kind: "indexed", title, chunks, timing };
}

/**
 * Test-only misbehaviour, so tests can prove the pool survives a bad parser. Enabled only when the
 * parent process had SLUICE_PARSER_TEST_HOOKS=1 when the pool was built; never set it in production.
 */
async function runTestHook(fileName: string, bytes: Uint8Array): Promise<void> {
  const base = fileName.split(/[\\/]/).pop() ?? "";
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
    const hog: number[][] = [];
    for (;;) hog.push(Array.from({ length: 100_000 }, (_, i) => i * Math.random()));
  }
  if (base.startsWith("__sluice_test_hang__")) {
    for (;;);
  }
}

const port = parentPort;
if (!port) throw new Error("parse.worker must run as a worker thread");
const { testHooks } = workerData as ParseWorkerData;
startHeapTrace("parser");

port.on("message", async (request: ParseRequest) => {
  const results: ParseOutcome[] = [];
  for (const file of request.files) {
    try {
      if (testHooks) await runTestHook(file.fileName, file.bytes);
      results.push({ ok: true, result: await parseFile(file.fileName, file.bytes) });
    } catch (err) {
      results.push({ ok: false, message: err instanceof Error ? err.message : String(err) });
    }
  }
  port.postMessage({ id: request.id, results } satisfies ParseReply);
});
