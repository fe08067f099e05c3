import { MessageChannel } from "node:worker_threads";
import type { ThreadedSqliteIndex } from "../search/threaded-index";
import { GROUP_COMMIT, PARALLEL_BATCHES } from "./batched-index-writer";
import { serveIndexPort } from "./index-port-server";
import type { ThreadableIndex } from "./job-thread";

/**
 * SQLite as the job thread's index: each job writes straight to the index writer thread over a
 * channel of its own, which takes one batch after another, so whatever arrives meanwhile joins
 * the next (group commit). A damaged file found by a job reaches the reading side.
 */
export function threadableSqlite(index: ThreadedSqliteIndex): ThreadableIndex {
  return {
    jobWrites: { batching: GROUP_COMMIT, settleWrites: false },
    writerPort: (collectionId) => index.writerPort(collectionId),
    noteDamaged: (collectionId) => index.noteDamaged(collectionId),
  };
}

/**
 * PostgreSQL as the job thread's index: a job's writes come back to this (the API's) thread,
 * which holds the pool, and are made through the job's own index (index-port-server.ts), so a
 * database outage is ridden out as before; two batches at once, one backend each; the job's end
 * folds the GIN pending lists in (settleWrites). Nothing is ever damaged: the index is the
 * team's database (PostgresFtsIndex.moveAside answers null, as for a job on this thread).
 */
export function threadablePostgres(): ThreadableIndex {
  return {
    jobWrites: { batching: PARALLEL_BATCHES, settleWrites: true },
    writerPort: (_collectionId, job) => {
      const { port1, port2 } = new MessageChannel();
      serveIndexPort(port2, job);
      return port1;
    },
    noteDamaged: () => undefined,
  };
}
