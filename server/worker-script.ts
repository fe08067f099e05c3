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
 * The young generation of the parser and index-writer threads. V8's default lets each
 * isolate's nursery grow to tens of MB; these threads allocate in short bursts, and at 8 MB
 * `npm run bench` ingested as fast with a ~30 MB lower peak RSS.
 */
export const WORKER_YOUNG_GENERATION_MB = 8;
