import path from "node:path";
import v8 from "node:v8";

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
 * The young generation (nursery) of the job, index-writer and search-reader threads: 4 MB, two
 * 2 MB semi-spaces (the main thread's is larger: SERVER_NODE_FLAGS). V8's default lets each isolate's
 * nursery grow to 32 MB, and a server runs six or seven isolates during a job; these threads
 * allocate little or in short bursts, so a small nursery only means more, shorter scavenges.
 * Measured with `npm run bench -- --memory` (docs/decisions/0191-small-young-generations.md).
 */
export const WORKER_YOUNG_GENERATION_MB = 4;

/**
 * The parsers' young generation stays at 8 MB: pdf.js allocates hard, and with 4 MB the same
 * PDFs took 12 % longer to parse (24 of the real corpus's PDFs twice, interleaved, one worker each).
 */
export const PARSER_YOUNG_GENERATION_MB = 8;

/**
 * The main thread's semi-space ceiling, in MB (its nursery is two of them). The API's thread
 * makes a request's garbage while a hundred others are in flight: with 2 MB, scavenges took 36 %
 * of its time under the load bench and each promoted the requests still open; 8 MB served ~40 %
 * more requests a second for ~2 % more peak memory (docs/decisions/0531-main-thread-nursery-8mb.md).
 */
export const MAIN_THREAD_SEMI_SPACE_MB = 8;

/**
 * The main thread's old-generation ceiling. V8 lets a heap grow to up to 4 times what survived
 * its last full collection when the ceiling is 2 GB or more (its default on a machine with this
 * much memory), 1.3 to 2 times below it. On a team server the ingestion job runs on the main
 * thread and makes garbage at the pace files arrive: its heap swelled to 100-135 MB between full
 * collections (docs/decisions/0200-main-thread-old-generation-1gb.md), as the job thread's did before its own 1 GB
 * ceiling. The API itself keeps far less than this (its caches are bounded: SEARCH_CACHE_MB).
 */
export const MAIN_THREAD_OLD_GENERATION_MB = 1024;

/**
 * Node flags of the server's process, given on the command line by every way it starts
 * (`npm start` and `npm run worker` in package.json, the Electron shell's utility process in
 * main/main.ts, the tests' fixtures): V8 sizes the main thread's heap before any script runs,
 * so they cannot be set from here. The main thread's semi-spaces grow to MAIN_THREAD_SEMI_SPACE_MB
 * (V8's default: 16 MB); the old generation's ceiling is MAIN_THREAD_OLD_GENERATION_MB.
 */
export const SERVER_NODE_FLAGS = [`--max-semi-space-size=${MAIN_THREAD_SEMI_SPACE_MB}`, `--max-old-space-size=${MAIN_THREAD_OLD_GENERATION_MB}`];

/**
 * Called first thing by the server's entry points: the flags above have sized the main thread's
 * heap, and left on they would also override every worker's `resourceLimits` (V8 prefers the
 * flags), holding the parsers to a 4 MB nursery and every thread to the main thread's ceiling.
 * Turned off, the threads started from now on size their own.
 */
export function keepHeapFlagsToMainThread(): void {
  v8.setFlagsFromString("--max-semi-space-size=0");
  v8.setFlagsFromString("--max-old-space-size=0");
}
