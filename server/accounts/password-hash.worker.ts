import fs from "node:fs";
import { parentPort, workerData } from "node:worker_threads";
import { checkPasswordNow, hashPasswordNow } from "./passwords";

/** A hashing thread: one job at a time, bcrypt's whole work blocking only this thread. */
export type HashRequest = { kind: "hash"; password: string } | { kind: "check"; password: string; stored: string };
export type HashJob = HashRequest & { id: number };
export type HashReply = { id: number; hash?: string; check?: { ok: boolean; outdated: boolean }; error?: string };

const { holdFile } = workerData as { holdFile: string | null };

parentPort!.on("message", (job: HashJob) => {
  // Tests only (SLUICE_TEST_HOLD_HASHING_FILE, a FIFO): each job waits until the test writes to it, so a full queue is reached without timing.
  if (holdFile) fs.readFileSync(holdFile);
  try {
    const reply: HashReply = job.kind === "hash" ? { id: job.id, hash: hashPasswordNow(job.password) } : { id: job.id, check: checkPasswordNow(job.password, job.stored) };
    parentPort!.postMessage(reply);
  } catch (error) {
    parentPort!.postMessage({ id: job.id, error: (error as Error).message } satisfies HashReply);
  }
});
