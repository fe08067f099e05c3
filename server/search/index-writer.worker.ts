import { parentPort, workerData, type MessagePort } from "node:worker_threads";
import { SqliteFtsIndex } from "./sqlite";
import { startHeapTrace } from "../diagnostics/heap-trace";
import { methodsOf, serve } from "../threads/rpc";

/** The index's write side on its own thread: FTS5 tokenizing would otherwise stall the API. */

/** What an ingestion job's thread asks over its own channel: its writes, the indexed state (and stored ACLs) it starts from, and its end. */
const JOB_CALLS = ["upsertDocuments", "stageChunks", "commitStaged", "discardStaged", "removeUnfinished", "removeDocuments", "markEmpty", "indexedState", "updatePermissions", "acls", "settleWrites"] as const;
export type IndexWriterJobCalls = Pick<SqliteFtsIndex, (typeof JOB_CALLS)[number]>;

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
const jobCalls = methodsOf(index, JOB_CALLS);

serve<IndexWriterCalls>(parentPort!, {
  ...jobCalls,
  ...methodsOf(index, ["release", "upgrade", "close"]),
  connect(port, checked) {
    index.trustChecked(checked);
    serve<IndexWriterJobCalls>(port, jobCalls);
    // A channel whose other thread ended must not keep this one alive.
    port.unref();
  },
});
