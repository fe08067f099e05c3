import { parentPort, workerData, type MessagePort } from "node:worker_threads";
import { openThreadConnector } from "../connectors/thread-connector";
import { DiskGuard } from "../disk/disk-space";
import type { IndexedState } from "../search/search-index";
import { JobCounters, type ProgressRow } from "./job-counters";
import type { FromJobThread, JobThreadData, JobThreadTask, ToJobThread } from "./job-thread-protocol";
import { ParserPool } from "./parse/parser-pool";
import { syncSource } from "./sync-source";
import { PendingCalls } from "../threads/pending-calls";
import { toWire } from "../threads/wire-error";
import { JOB_ERROR_KINDS } from "./job-interrupted";
import { WriterPortIndex } from "./writer-port-index";
import { startHeapTrace } from "../diagnostics/heap-trace";
import { lowerThisThreadPriority } from "../threads/thread-priority";

/**
 * Ingestion jobs' data paths on a thread of their own (job-thread.ts starts it): listing, reads,
 * parsing (this thread's parser pool) and index writes (straight to the writer thread) never
 * wait for a turn of the API's event loop, however many clients it serves. The API's thread
 * keeps each job's row, which this thread's counters are posted to.
 */

const { disk: diskLimit } = workerData as JobThreadData;
startHeapTrace("job thread");
lowerThisThreadPriority();
const port = parentPort!;
const post = (message: FromJobThread) => port.postMessage(message);

/** Counters are posted this often at most; the API's thread writes the row at its own pace (job-progress.ts). */
const POST_EVERY_MS = 100;

class PostedCounters extends JobCounters {
  constructor(private readonly run: number) {
    super(POST_EVERY_MS);
  }

  protected async persist(row: ProgressRow, asked: boolean): Promise<void> {
    post({ type: "progress", run: this.run, row, flush: asked });
  }
}

const parsers = new ParserPool();
const disk = diskLimit ? new DiskGuard(diskLimit.dir, diskLimit.minFreeBytes) : null;
const cancels = new Map<number, AbortController>();
/** Questions on the index asked of the API's thread, waiting for its answer. */
const asked = new PendingCalls(JOB_ERROR_KINDS);

port.on("message", (message: ToJobThread) => {
  switch (message.type) {
    case "start":
      return void run(message.run, message.task, message.writer);
    case "cancel":
      return cancels.get(message.run)?.abort();
    case "answer":
      return void asked.settle(message);
  }
});

function ask<T>(method: "indexedState" | "moveAside", ...args: string[]): Promise<T> {
  return asked.call<T>(undefined, (id) => post({ type: "ask", id, method, args }));
}

async function run(runId: number, task: JobThreadTask, writer: MessagePort): Promise<void> {
  const cancel = new AbortController();
  cancels.set(runId, cancel);
  const progress = new PostedCounters(runId);
  const index = new WriterPortIndex(writer, {
    indexedState: (collectionId, sourceId) => ask<Map<string, IndexedState>>("indexedState", collectionId, sourceId),
    moveAside: (collectionId) => ask<string | null>("moveAside", collectionId),
  });
  let outcome: FromJobThread;
  try {
    const connector = openThreadConnector(task.connector);
    try {
      await syncSource({ index, parsers, disk }, connector, task.sourceId, task.collectionId, progress, cancel.signal);
    } finally {
      await connector.close();
    }
    outcome = { type: "done", run: runId };
  } catch (error) {
    outcome = { type: "failed", run: runId, error: toWire(error) };
  }
  cancels.delete(runId);
  index.close();
  // The last counters before how it ended: messages arrive in order.
  await progress.flush();
  post(outcome);
}
