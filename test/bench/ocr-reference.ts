import { spawn } from "node:child_process";
import { setPriority } from "node:os";
import { FEEDER_NICENESS } from "../../server/threads/thread-priority";

/** What the OCR benches share: the `tesseract` command they compare with, and how often they ask whether the job ended. */

/**
 * How often an OCR bench asks whether the job ended: every 20 ms (the tests' default) was 50
 * requests a second for minutes, CPU taken from the job it times on a 2-core machine.
 */
export const JOB_POLL_MS = 1_000;

/**
 * The `tesseract` command on one picture as the reference reads it: one thread, page
 * segmentation 3, the file's own resolution. It runs at the niceness Sluice's own tesseract
 * processes get (they inherit their parser thread's, FEEDER_NICENESS where the system allows
 * it, else the server's own), so on a busy machine the two are not weighed differently.
 */
export function tesseractCommand(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn("tesseract", [file, "stdout", "--psm", "3"], { env: { ...process.env, OMP_THREAD_LIMIT: "1" }, stdio: ["ignore", "pipe", "ignore"] });
    try {
      if (process.platform === "linux" && child.pid) setPriority(child.pid, FEEDER_NICENESS);
    } catch {
      // Not allowed (it would raise the priority): it keeps this process's, as a parser thread does.
    }
    const out: Buffer[] = [];
    child.stdout.on("data", (d: Buffer) => out.push(d));
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve(Buffer.concat(out).toString("utf8")) : reject(new Error(`tesseract ${file} exited with ${code}`))));
  });
}
