import { parentPort } from "node:worker_threads";
import { startHeapTrace } from "../diagnostics/heap-trace";
import { ExactFiles, failuresToWire, type ExactReply, type ExactRequest } from "./exact-writer";

/**
 * The exact-words files' writer (exact-writer.ts): applies each batch the index writer thread
 * sends, in order, in a transaction of its own, on a core beside the index writer's.
 */

const files = new ExactFiles();
startHeapTrace("exact-words writer");

const reply = (message: ExactReply) => parentPort!.postMessage(message);

parentPort!.on("message", (request: ExactRequest) => {
  switch (request.kind) {
    case "apply":
      files.apply(request.file, request.batch);
      reply({ kind: "applied" });
      return;
    case "settle":
      reply({ kind: "answer", id: request.id, failures: failuresToWire(files.takeFailures(request.files)) });
      return;
    case "reset":
      files.reset(request.file);
      reply({ kind: "answer", id: request.id });
      return;
    case "close":
      files.closeAll();
      reply({ kind: "answer", id: request.id });
      return;
  }
});
