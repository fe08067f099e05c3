import fs from "node:fs";
import path from "node:path";
import readline from "node:readline";
import pinoRoll from "pino-roll";

/** The desktop log: files of 10 MB at most, the 5 newest kept (50 MB in all). */
export const DESKTOP_LOG = { maxBytes: 10 * 1024 * 1024, keep: 5 };
const BASE_NAME = "sluice";

export interface RotatingLog {
  /** Copies a stream's lines (the server child's stdout or stderr) into the log, whole lines only. */
  attach(stream: NodeJS.ReadableStream): void;
  close(): Promise<void>;
}

/**
 * The server child's output, kept in `dir` as sluice.N.log (the highest N is the one being
 * written) by pino-roll, pino's rotating file destination. It runs here, in the shell's own
 * thread, not as a pino transport: a transport is a worker thread that loads its files from
 * disk, which in the packaged app are inside app.asar. Writes are synchronous (pino-roll only
 * rolls after a drain, which its asynchronous mode does not emit for small writes) and come
 * in whole lines, so a line is never split across two files.
 */
export async function openRotatingLog(dir: string, { maxBytes, keep } = DESKTOP_LOG): Promise<RotatingLog> {
  fs.mkdirSync(dir, { recursive: true });
  adoptUnrotatedLog(dir);
  const destination = await pinoRoll({
    file: path.join(dir, BASE_NAME),
    extension: ".log",
    size: `${maxBytes}b`,
    // With removeOtherLogFiles, files left by earlier runs count too; `count` is the total kept.
    limit: { count: keep, removeOtherLogFiles: true },
    sync: true,
  });
  // A failed write or clean-up must never take the shell down; the app runs on without its log.
  destination.on("error", () => undefined);
  let closed = false;
  return {
    attach(stream) {
      readline.createInterface({ input: stream, crlfDelay: Infinity }).on("line", (line) => {
        if (!closed) destination.write(`${line}\n`);
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        if (closed) return resolve();
        closed = true;
        destination.once("close", () => resolve());
        destination.end();
      }),
  };
}

/** sluice.log from versions before rotation becomes sluice.0.log: the oldest file, removed by the first rotations. */
function adoptUnrotatedLog(dir: string): void {
  const legacy = path.join(dir, `${BASE_NAME}.log`);
  const adopted = path.join(dir, `${BASE_NAME}.0.log`);
  if (fs.existsSync(legacy) && !fs.existsSync(adopted)) fs.renameSync(legacy, adopted);
}
