import fs from "node:fs";
import v8 from "node:v8";
import { threadId } from "node:worker_threads";
import { mallocInfo, trimStats } from "../memory/glibc-malloc";

/**
 * A debug aid for memory work (`npm run bench -- --memory`): with SLUICE_HEAP_TRACE=FILE in the
 * environment, every thread that calls this appends a JSON line of its own V8 heap to FILE every
 * 100 ms (the main thread adds the process's RSS and, on glibc, malloc's totals and the trims so
 * far), so a peak can be split by thread. Off (a no-op) otherwise. Lines are short and written
 * with one append each, so threads do not interleave.
 */
export function startHeapTrace(thread: string): void {
  const file = process.env.SLUICE_HEAP_TRACE;
  if (!file) return;
  const sample = () => {
    const heap = v8.getHeapStatistics();
    const usage = process.memoryUsage();
    const newSpace = v8.getHeapSpaceStatistics().find((s) => s.space_name === "new_space");
    const line = {
      t: Date.now(),
      thread,
      threadId,
      heapTotal: heap.total_heap_size,
      heapUsed: heap.used_heap_size,
      heapLimit: heap.heap_size_limit,
      newSpace: newSpace?.space_size ?? 0,
      malloced: heap.malloced_memory,
      external: heap.external_memory,
      arrayBuffers: usage.arrayBuffers,
      ...(threadId === 0 ? { rss: usage.rss, malloc: mallocInfo(), trims: { ...trimStats } } : {}),
    };
    try {
      fs.appendFileSync(file, `${JSON.stringify(line)}\n`);
    } catch {
      // a trace that cannot be written is not worth failing the server for
    }
  };
  // Debug aid: once a file FILE.snapshot appears, each thread writes one heap snapshot beside FILE.
  let snapshotTaken = false;
  const snapshotOnRequest = () => {
    if (snapshotTaken || !fs.existsSync(`${file}.snapshot`)) return;
    snapshotTaken = true;
    v8.writeHeapSnapshot(`${file}.${thread.replace(/\W+/g, "-")}-${threadId}.heapsnapshot`);
  };
  sample();
  setInterval(() => {
    sample();
    snapshotOnRequest();
  }, 100).unref();
}
