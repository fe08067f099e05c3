import { parentPort, workerData } from "node:worker_threads";
import { SqliteFtsIndex } from "./sqlite";
import { startHeapTrace } from "../diagnostics/heap-trace";
import { methodsOf, serve } from "../threads/rpc";

/** One search reader thread: its own read-only connections to the collection files (index-reader-pool.ts). */

const CALLS = ["search", "listDocuments", "check", "release", "markDamaged"] as const;
/** Searches and document pages (pooled), and a file's first check and letting go of it (every thread). */
export type IndexReaderCalls = Pick<SqliteFtsIndex, (typeof CALLS)[number]>;

// An error keeps its code: SQLite's, or SLUICE_INDEX_DAMAGED, so the caller can tell a damaged index apart.
const index = new SqliteFtsIndex({ dir: (workerData as { dir: string }).dir, readOnly: true });
startHeapTrace("index reader");
serve<IndexReaderCalls>(parentPort!, methodsOf(index, CALLS));
