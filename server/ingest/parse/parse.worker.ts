// Worker thread entry for ParserPool (parser-pool.ts): parses and chunks a batch of files per message.
// Runs compiled (dist/.../parse.worker.js) or from source under tsx (parse.worker.ts).
import { parentPort, workerData } from "node:worker_threads";
import { startHeapTrace } from "../../diagnostics/heap-trace";
import { lowerThisThreadPriority } from "../../threads/thread-priority";
import { parseBatch, type ParseReply, type ParseRequest, type ParseWorkerData } from "./parse-batch";

const port = parentPort;
if (!port) throw new Error("parse.worker must run as a worker thread");
const { testHooks } = workerData as ParseWorkerData;
startHeapTrace("parser");
lowerThisThreadPriority();

port.on("message", async (request: ParseRequest) => {
  port.postMessage({ id: request.id, results: await parseBatch(request.files, testHooks) } satisfies ParseReply);
});

