import { execFile, spawn } from "node:child_process";

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

/** The text of one picture (any file Leptonica reads: PGM, PNG, JPEG, TIFF, ...). Rejects with what Tesseract said. */
export function nativeRecognize(image: Uint8Array, languages: string[], dpi: number | null): Promise<string> {
  return new Promise((resolve, reject) => {
    const args = ["stdin", "stdout", "-l", languages.join("+"), "--psm", "3", ...(dpi ? ["--dpi", String(dpi)] : [])];
    const child = spawn("tesseract", args, { env: { ...process.env, OMP_THREAD_LIMIT: "1" }, windowsHide: true, stdio: ["pipe", "pipe", "pipe"] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (data: Buffer) => out.push(data));
    child.stderr.on("data", (data: Buffer) => err.push(data));
    child.on("error", reject);
    // A picture Tesseract refuses closes stdin early: its exit code says so, not the pipe.
    child.stdin.on("error", () => undefined);
    child.on("close", (code) => {
      if (code === 0) return resolve(Buffer.concat(out).toString("utf8"));
      const said = Buffer.concat(err).toString("utf8").split(/\r?\n/).filter((line) => /error|cannot|can't|fail|unsupported/i.test(line));
      reject(new Error(said[0]?.trim() || `tesseract exited with code ${code}`));
    });
    child.stdin.end(image);
  });
}
