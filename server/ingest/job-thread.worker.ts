import { parentPort, workerData } from "node:worker_threads";
import { openThreadConnector } from "../connectors/thread-connector";
import { DiskGuard } from "../disk/disk-space";
import type { IndexedState } from "../search/search-index";
import { JobCounters, type ProgressRow } from "./job-counters";
import type { FromJobThread, JobThreadStart, ToJobThread } from "./job-thread-protocol";
import { ParserPool } from "./parse/parser-pool";
import { syncSource } from "./sync-source";
import { fromWire, toWire } from "./thread-errors";
import { WriterPortIndex } from "./writer-port-index";

/**
 * One ingestion job's data path on a thread of its own (job-thread.ts starts it): listing,
 * reads, parsing (its own parser threads) and index writes (straight to the writer thread)
 * never wait for a turn of the API's event loop, however many clients it serves. The API's
 * thread keeps the job's row, which this thread's counters are posted to.
 */

const start = workerData as JobThreadStart;
const port = parentPort!;
const post = (message: FromJobThread) => port.postMessage(message);

/** Counters are posted this often at most; the API's thread writes the row at its own pace (job-progress.ts). */
const POST_EVERY_MS = 100;

class PostedCounters extends JobCounters {
  constructor() {
    super(POST_EVERY_MS);
  }

  protected async persist(row: ProgressRow): Promise<void> {
    post({ type: "progress", row });
  }
}

const cancel = new AbortController();
const asked = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
let nextAsk = 1;

port.on("message", (message: ToJobThread) => {
  if (message.type === "cancel") return cancel.abort();
  const call = asked.get(message.id);
  asked.delete(message.id);
  if (message.ok) call?.resolve(message.result);
  else call?.reject(fromWire(message.error));
});

function ask<T>(method: "indexedState" | "moveAside", ...args: string[]): Promise<T> {
  const id = nextAsk++;
  return new Promise<T>((resolve, reject) => {
    asked.set(id, { resolve: resolve as (value: unknown) => void, reject });
    post({ type: "ask", id, method, args });
  });
}

async function run(): Promise<void> {
  const progress = new PostedCounters();
  const parsers = new ParserPool();
  const index = new WriterPortIndex(start.writer, {
    indexedState: (collectionId, sourceId) => ask<Map<string, IndexedState>>("indexedState", collectionId, sourceId),
    moveAside: (collectionId) => ask<string | null>("moveAside", collectionId),
  });
  const disk = start.disk ? new DiskGuard(start.disk.dir, start.disk.minFreeBytes) : null;
  let outcome: FromJobThread;
  try {
    const connector = openThreadConnector(start.connector);
    try {
      await syncSource({ index, parsers, disk }, connector, start.sourceId, start.collectionId, progress, cancel.signal);
    } finally {
      await connector.close();
    }
    outcome = { type: "done" };
  } catch (error) {
    outcome = { type: "failed", error: toWire(error) };
  }
  await parsers.close();
  index.close();
  // The last counters before how it ended: messages arrive in order.
  await progress.flush();
  post(outcome);
}

void run();
