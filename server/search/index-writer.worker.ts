import { parentPort, workerData, type MessagePort } from "node:worker_threads";
import { SqliteFtsIndex } from "./sqlite";
import { startHeapTrace } from "../diagnostics/heap-trace";
import { methodsOf, serve } from "../threads/rpc";

/** The index's write side on its own thread: FTS5 tokenizing would otherwise stall the API. */

/** What an ingestion job's thread asks over its own channel: its writes, the indexed state (and stored ACLs) it starts from, and its end. */
const JOB_CALLS = ["upsertDocuments", "stageChunks", "commitStaged", "discardStaged", "removeUnfinished", "removeDocuments", "markEmpty", "indexedState", "updatePermissions", "acls"] as const;
/** settleWrites: the job's end, answered before the settle runs (settleAfterReply). */
export type IndexWriterJobCalls = Pick<SqliteFtsIndex, (typeof JOB_CALLS)[number]> & { settleWrites(collectionId: string): void };

/**
 * What the API's thread asks: the same, letting go of or upgrading a file, closing, and `connect`
 * (a note): another thread's own channel to the writer, whose calls are answered on it; `checked`:
 * its collection, when a search reader has just found its file sound (trustChecked).
 */
export type IndexWriterCalls = IndexWriterJobCalls &
  Pick<SqliteFtsIndex, "release" | "upgrade" | "close"> & {
    connect(port: MessagePort, checked: string[]): void;
  };

// An error keeps its code: SQLite's or the OS's (SQLITE_FULL, ENOSPC) or SLUICE_INDEX_DAMAGED, so the caller can tell those apart.
const index = new SqliteFtsIndex({ dir: (workerData as { dir: string }).dir });
startHeapTrace("index writer");
/**
 * A job's end is answered at once and its settle (SqliteFtsIndex.settleWrites: the optimize, the
 * WAL folded in, the clean mark) runs right after the reply, on this thread: a first load's
 * optimize is no longer part of the job's time, and writes that come meanwhile wait behind it as
 * behind any write (decision 0536). Letting go of a file, or closing, drops its pending settle:
 * the segments stay for the next job that writes, and the file keeps no mark.
 */
const pendingSettles = new Map<string, NodeJS.Immediate>();

function settleAfterReply(collectionId: string): void {
  if (pendingSettles.has(collectionId)) return;
  pendingSettles.set(
    collectionId,
    setImmediate(() => {
      pendingSettles.delete(collectionId);
      // Damage found here is recorded by the files (guarded), and the collection's next read or write answers it; nothing else throws (0501).
      index.settleWrites(collectionId).catch(() => undefined);
    }),
  );
}

function dropPendingSettle(collectionId?: string): void {
  for (const [id, immediate] of pendingSettles) {
    if (collectionId !== undefined && id !== collectionId) continue;
    clearImmediate(immediate);
    pendingSettles.delete(id);
  }
}

const jobCalls = { ...methodsOf(index, JOB_CALLS), settleWrites: settleAfterReply };

serve<IndexWriterCalls>(parentPort!, {
  ...jobCalls,
  release(collectionId) {
    dropPendingSettle(collectionId);
    return index.release(collectionId);
  },
  upgrade: (collectionId) => index.upgrade(collectionId),
  close() {
    dropPendingSettle();
    return index.close();
  },
  connect(port, checked) {
    index.trustChecked(checked);
    serve<IndexWriterJobCalls>(port, jobCalls);
    // A channel whose other thread ended must not keep this one alive.
    port.unref();
  },
});
