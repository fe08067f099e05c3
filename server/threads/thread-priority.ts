import { setPriority } from "node:os";

/**
 * The nice value of the threads that feed an ingestion (the job thread, the parsers). Below the
 * API's thread and the index writer (both 0): when they contend for a core, a thread at 5 gets
 * about a third of the CPU weight of one at 0 (CFS weights 335 against 1,024). On a 2-core machine
 * the index writer is an ingestion's critical path and the API's thread answers the LAN; the
 * feeding threads run ahead of the writer (it always has a batch queued) and lose little by
 * waiting. Measured: SQLite ingestion of the bench corpus 6 % faster at 5 and at 10 than at 0
 * (docs/decisions/0189-feeder-threads-nice-10.md); under 100 connections of load, 10 starved the
 * feeders (ingestion 1.59x slower, median of 5) where 5 keeps 1.40x at the same API p99
 * (docs/decisions/0534-feeder-threads-nice-5.md).
 */
export const FEEDER_NICENESS = 5;

/**
 * Lowers the calling thread's scheduling priority to `niceness`. Only on Linux, where a nice value
 * belongs to a thread (setpriority on "process" 0 is the calling thread); on macOS and Windows the
 * same call lowers the whole app, so it does nothing there. An unprivileged thread cannot raise it
 * back, so it is for threads that do nothing else. Failure is harmless (the thread keeps its
 * priority) and not logged: a worker thread has no logger of its own.
 */
export function lowerThisThreadPriority(niceness: number = FEEDER_NICENESS): void {
  if (process.platform !== "linux") return;
  try {
    setPriority(0, niceness);
  } catch {
    // The thread keeps the priority it has.
  }
}
