// Worker thread entry for ParserPool (parser-pool.ts): parses and chunks a batch of files per call.
// Runs compiled (dist/.../parse.worker.js) or from source under tsx (parse.worker.ts).
import { parentPort, workerData } from "node:worker_threads";
import { startHeapTrace } from "../../diagnostics/heap-trace";
import { lowerThisThreadPriority } from "../../threads/thread-priority";
import { serve, type CallRequest } from "../../threads/rpc";
import { parseBatch, type ParseFile, type ParseOutcome, type ParseWorkerData } from "./parse-batch";

/**
 * What the pool calls on a parser thread. `parse`: one outcome per file, in their order. The
 * files are the call's arguments themselves, so a batch's request holds no array of its own.
 */
export interface ParserCalls {
  parse(...files: ParseFile[]): Promise<ParseOutcome[]>;
}

/** What a parser thread tells the pool: a note once its parsers are loaded, when parse time starts to count. */
export interface ParserHostCalls {
  ready(): void;
}

const port = parentPort;
if (!port) throw new Error("parse.worker must run as a worker thread");
const { testHooks } = workerData as ParseWorkerData;
startHeapTrace("parser");
lowerThisThreadPriority();

serve<ParserCalls>(port, { parse: (...files) => parseBatch(files, testHooks) });
port.postMessage({ id: 0, method: "ready", args: [] } satisfies CallRequest<ParserHostCalls>);
