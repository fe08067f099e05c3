import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import path from "node:path";
import { createInterface, type Interface } from "node:readline";

/**
 * Requests timed from a process of their own (http-timer-child.ts), for the latency rows of
 * `--search-corpora`: the bench's own process holds the corpus, the engine's connection and the
 * in-process search, and its fetch client and garbage collector then add to what a request
 * seems to take (a trivial `GET /health` read 0.7-1.1 ms at p50 from there, 0.3 ms from a process
 * doing nothing else). The child keeps one keep-alive connection (node:http), times from the
 * request's start to its last byte, and reads the answer only after the clock stops.
 */
export interface HttpTimer {
  /** GET `pathAndQuery` (with the bearer token when given): its status, the number of `results` in a JSON answer (0 without), and the ms it took. */
  get(pathAndQuery: string, token?: string): Promise<{ status: number; results: number; ms: number }>;
  close(): Promise<void>;
}

export function startHttpTimer(baseUrl: string): HttpTimer {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [path.join(__dirname, "http-timer-child.js"), baseUrl], { stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (chunk) => (stderr += chunk));
  const lines: Interface = createInterface({ input: child.stdout });
  const waiting: Array<(line: string) => void> = [];
  lines.on("line", (line) => waiting.shift()?.(line));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    get(pathAndQuery, token) {
      return new Promise((resolve, reject) => {
        if (child.exitCode !== null) return reject(new Error(`the timing client exited: ${stderr}`));
        waiting.push((line) => {
          const answer = JSON.parse(line) as { status: number; results: number; ms: number } | { error: string };
          if ("error" in answer) reject(new Error(`GET ${pathAndQuery}: ${answer.error}`));
          else resolve(answer);
        });
        child.stdin.write(`${JSON.stringify({ path: pathAndQuery, token })}\n`);
      });
    },
    async close() {
      child.stdin.end();
      await exited;
    },
  };
}
