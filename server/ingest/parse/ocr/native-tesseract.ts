import { execFile, spawn } from "node:child_process";
import { limitChild } from "./child-limit";
import { ocrHost } from "./ocr-host";

/**
 * The `tesseract` command (Tesseract 4 or 5, e.g. Debian's tesseract-ocr) where it is installed:
 * about 1.7 times faster per core than tesseract.js here (docs/decisions/0400-ocr-engines.md). One
 * process per page on one thread (OMP_THREAD_LIMIT=1): the parser pool gives the cores out.
 */

let installed: Promise<Set<string> | null> | null = null;

/** The languages the installed command has data for, or null when there is no such command. */
export function nativeLanguages(): Promise<Set<string> | null> {
  installed ??= new Promise((resolve) => {
    execFile("tesseract", ["--list-langs"], { timeout: 10_000, windowsHide: true }, (error, stdout) => {
      if (error) return resolve(null);
      // The first line is "List of available languages in ... (N):".
      resolve(new Set(stdout.split(/\r?\n/).slice(1).map((line) => line.trim()).filter(Boolean)));
    });
  });
  return installed;
}

/**
 * The wall-clock backstop of a `tesseract` process, in page limits: the limit itself counts its
 * CPU time (decision 0496), and a page that used a few CPU seconds took 180 s of wall time at a
 * load average of 28. Only a process stuck without using CPU meets this.
 */
export const WALL_BACKSTOP_LIMITS = 10;

/**
 * The text of one picture (any file Leptonica reads: PGM, PNG, JPEG, TIFF, ...). Rejects with
 * what Tesseract said, past the page's limit (child-limit.ts), or when `signal` aborts (the
 * process is killed then).
 */
export function nativeRecognize(image: Uint8Array, languages: string[], dpi: number | null, signal?: AbortSignal): Promise<string> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new Error("stopped"));
    const args = ["stdin", "stdout", "-l", languages.join("+"), "--psm", "3", ...(dpi ? ["--dpi", String(dpi)] : [])];
    const child = spawn("tesseract", args, { env: { ...process.env, OMP_THREAD_LIMIT: "1" }, windowsHide: true, stdio: ["pipe", "pipe", "pipe"] });
    const host = ocrHost();
    const pid = child.pid;
    if (pid !== undefined) host.child(pid, true);
    let limited: string | null = null;
    const stopWatch = limitChild(child, {
      cpuMs: host.pageLimitMs,
      wallMs: host.pageLimitMs * WALL_BACKSTOP_LIMITS,
      onAlive: host.alive,
      onExceeded: (after) => (limited = `timed out after ${after}`),
    });
    const stop = () => child.kill("SIGKILL");
    signal?.addEventListener("abort", stop, { once: true });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (data: Buffer) => out.push(data));
    child.stderr.on("data", (data: Buffer) => err.push(data));
    child.on("error", (error) => {
      stopWatch();
      signal?.removeEventListener("abort", stop);
      reject(error);
    });
    // A picture Tesseract refuses closes stdin early: its exit code says so, not the pipe.
    child.stdin.on("error", () => undefined);
    child.on("close", (code) => {
      stopWatch();
      signal?.removeEventListener("abort", stop);
      if (pid !== undefined) host.child(pid, false);
      if (limited) return reject(new Error(limited));
      if (signal?.aborted) return reject(new Error("stopped"));
      if (code === 0) return resolve(Buffer.concat(out).toString("utf8"));
      const said = Buffer.concat(err).toString("utf8").split(/\r?\n/).filter((line) => /error|cannot|can't|fail|unsupported/i.test(line));
      reject(new Error(said[0]?.trim() || `tesseract exited with code ${code}`));
    });
    child.stdin.end(image);
  });
}
