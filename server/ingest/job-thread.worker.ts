import { parentPort, workerData, type MessagePort } from "node:worker_threads";
import { openThreadConnector } from "../connectors/thread-connector";
import { DiskGuard } from "../disk/disk-space";
import { JobCounters, type ProgressRow } from "./job-counters";
import type { JobHostCalls, JobThreadCalls, JobThreadData, JobThreadTask } from "./job-thread-protocol";
import { ParserPool } from "./parse/parser-pool";
import { syncSource } from "./sync-source";
import { Caller, serve } from "../threads/rpc";
import { JOB_ERROR_KINDS } from "./job-interrupted";
import { WriterPortIndex } from "./writer-port-index";
import { startHeapTrace } from "../diagnostics/heap-trace";
import { lowerThisThreadPriority } from "../threads/thread-priority";

/**
 * Ingestion jobs' data paths on a thread of their own (job-thread.ts starts it): listing, reads,
 * parsing (this thread's parser pool) and the index's reads and writes (straight to the writer
 * thread) never wait for a turn of the API's event loop, however many clients it serves. The
 * API's thread keeps each job's row, which this thread's counters are posted to.
 */

const { disk: diskLimit, ocr, parsersIdleMs } = workerData as JobThreadData;
startHeapTrace("job thread");
lowerThisThreadPriority();
const port = parentPort!;
/** The API's thread: counters (notes) and the one question a job asks of it (moveAside). */
const host = new Caller<JobHostCalls>((message, transfer) => port.postMessage(message, transfer), JOB_ERROR_KINDS);

/** Counters are posted this often at most; the API's thread writes the row at its own pace (job-progress.ts). */
const POST_EVERY_MS = 100;

class PostedCounters extends JobCounters {
  constructor(private readonly run: number) {
    super(POST_EVERY_MS);
  }

  protected async persist(row: ProgressRow, asked: boolean): Promise<void> {
    host.note("progress", this.run, row, asked);
  }
}

const parsers = new ParserPool({ ...(ocr ? { ocr } : {}), steadyIdleMs: parsersIdleMs });
const disk = diskLimit ? new DiskGuard(diskLimit.dir, diskLimit.minFreeBytes) : null;
const cancels = new Map<number, AbortController>();
const moveAside = (collectionId: string) => host.call("moveAside", collectionId);

async function run(runId: number, task: JobThreadTask, writer: MessagePort): Promise<void> {
  const cancel = new AbortController();
  cancels.set(runId, cancel);
  const progress = new PostedCounters(runId);
  const index = new WriterPortIndex(writer, moveAside);
  let failure: { error: unknown } | null = null;
  try {
    const connector = openThreadConnector(task.connector);
    try {
      await syncSource({ index, parsers, disk }, connector, task.sourceId, task.collectionId, progress, cancel.signal, task.permissionServer);
    } finally {
      await connector.close();
    }
  } catch (error) {
    failure = { error };
  }
  cancels.delete(runId);
  index.close();
  // The last counters before how it ended (the reply): messages arrive in order.
  await progress.flush();
  if (failure) throw failure.error;
}

serve<JobThreadCalls>(port, { run, cancel: (runId) => cancels.get(runId)?.abort() }, (reply) => void host.settle(reply));
