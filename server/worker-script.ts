import path from "node:path";

/**
 * Where a worker thread's script is and how to start it. Compiled, it is the .js beside the
 * caller; from source under tsx, the .ts, loaded through tsx's CommonJS hook (`--import tsx`
 * does not reach worker threads on Node 20: "Unknown file extension .ts").
 */
export function workerScript(callerFilename: string, baseName: string): { file: string; execArgv: string[] } {
  const fromSource = callerFilename.endsWith(".ts");
  return {
    file: path.join(path.dirname(callerFilename), `${baseName}${fromSource ? ".ts" : ".js"}`),
    execArgv: fromSource ? ["--require", "tsx/cjs"] : [],
  };
}

/**
 * The young generation (nursery) of every worker thread: 4 MB, two 2 MB semi-spaces, as the
 * main thread's (SERVER_NODE_FLAGS). V8's default lets each isolate's nursery grow to 32 MB, and
 * a server runs five or six isolates during a job; these threads allocate in short bursts, so a
 * small nursery only means more, shorter scavenges. Measured with `npm run bench -- --memory`
 * (docs/decisions.md, "Memory"): 8 -> 4 MB here and on the main thread cut the peak RSS by
 * ~50-100 MB at the same CPU time.
 */
export const WORKER_YOUNG_GENERATION_MB = 4;

/**
 * Node flags of the server's process, given on the command line by every way it starts
 * (`npm start` and `npm run worker` in package.json, the Electron shell's utility process in
 * main/main.ts, the tests' fixtures): V8 sizes the main thread's heap before any script runs,
 * so they cannot be set from here. A 2 MB semi-space is the main thread's young generation of
 * WORKER_YOUNG_GENERATION_MB (the default grows to 16 MB, two of them: 32 MB held for good).
 */
export const SERVER_NODE_FLAGS = ["--max-semi-space-size=2"];
