// Worker thread entry for ParserPool (parser-pool.ts): parses and chunks a batch of files per call.
// Runs compiled (dist/.../parse.worker.js) or from source under tsx (parse.worker.ts).
import { parentPort, workerData } from "node:worker_threads";
import { startHeapTrace } from "../../diagnostics/heap-trace";
import { lowerThisThreadPriority } from "../../threads/thread-priority";
import { serve, type CallRequest } from "../../threads/rpc";
import { configureAllowance } from "./ocr/ocr-allowance";
import { configureOcr } from "./ocr/ocr-engine";
import { configureOcrHost } from "./ocr/ocr-host";
import { parseBatch, type ParseFile, type ParseOutcome, type ParseWorkerData } from "./parse-batch";

/**
 * What the pool calls on a parser thread. `parse`: one outcome per file, in their order. The
 * files are the call's arguments themselves, so a batch's request holds no array of its own.
 */
export interface ParserCalls {
  parse(...files: ParseFile[]): Promise<ParseOutcome[]>;
}

/**
 * What a parser thread tells the pool: a note once its parsers are loaded, when parse time
 * starts to count; and where a long parse is (a page going to OCR), which also restarts its time limit.
 */
export interface ParserHostCalls {
  ready(): void;
  progress(fileName: string, text: string): void;
  /** OCR waits on an engine within its limits: the time limit starts again (ocr-host.ts). */
  alive(): void;
  /** A `tesseract` process started or ended: the pool ends those still running with the thread. */
  child(pid: number, running: boolean): void;
}

const port = parentPort;
if (!port) throw new Error("parse.worker must run as a worker thread");
const { testHooks, ocr, allowance, ocrPageLimitMs } = workerData as ParseWorkerData;
startHeapTrace("parser");
lowerThisThreadPriority();
configureOcr(ocr);
configureAllowance(allowance);
configureOcrHost({
  alive: () => port.postMessage({ id: 0, method: "alive", args: [] } satisfies CallRequest<ParserHostCalls>),
  child: (pid, running) => port.postMessage({ id: 0, method: "child", args: [pid, running] } satisfies CallRequest<ParserHostCalls>),
  pageLimitMs: ocrPageLimitMs,
});

const progress = (fileName: string, text: string) => port.postMessage({ id: 0, method: "progress", args: [fileName, text] } satisfies CallRequest<ParserHostCalls>);
serve<ParserCalls>(port, { parse: (...files) => parseBatch(files, testHooks, progress) });
port.postMessage({ id: 0, method: "ready", args: [] } satisfies CallRequest<ParserHostCalls>);
