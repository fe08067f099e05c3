import { ConfigError, loadConfig, type Config } from "../config";
import { createLogger, type Logger } from "../logger";
import { startHeapTrace } from "../diagnostics/heap-trace";
import { keepHeapFlagsToMainThread } from "../worker-script";
import { tuneMalloc } from "../memory/glibc-malloc";

/** A process's work once started: the line that says it is ready, and how it stops. */
export interface Running {
  /** Printed on stdout whatever LOG_LEVEL is (main/server-process.ts and the test fixtures wait for it). */
  readyLine: string;
  close(): Promise<void>;
}

export interface RunOptions {
  /** The log's words after "SIGTERM received, ". */
  stopping: string;
  /** What a start-up failure is called in the log ("failed to start"). */
  failure: string;
  /** The thread name for SLUICE_HEAP_TRACE (diagnostics/heap-trace.ts); none: no trace. */
  heapTrace?: string;
  start(config: Config, logger: Logger): Promise<Running>;
}

/**
 * The one start-up and shutdown of the headless processes (`npm start`, `npm run worker`, the
 * Electron-forked server): read the configuration, start, print the ready line, and on the first
 * SIGINT/SIGTERM close (ingestion first, so the running job fails durably) and exit 0. A start-up
 * failure is logged (a configuration error as such) and exits 1.
 */
export function runUntilSignal(options: RunOptions): void {
  // The command line's heap flags have sized this thread's heap; threads size their own.
  keepHeapFlagsToMainThread();
  // Before any worker thread starts: glibc makes arenas as threads first allocate (memory/glibc-malloc.ts).
  const mallocTuning = tuneMalloc();
  // At info until the configuration is read: a configuration error is reported at any LOG_LEVEL.
  const logger = createLogger();
  if (options.heapTrace) startHeapTrace(options.heapTrace);
  const run = async () => {
    const config = loadConfig();
    logger.level = config.logLevel;
    logger.debug(mallocTuning.detail);
    const running = await options.start(config, logger);
    process.stdout.write(`${running.readyLine}\n`);
    let stopping = false;
    const stop = async (signal: string) => {
      if (stopping) return;
      stopping = true;
      logger.info(`${signal} received, ${options.stopping}`);
      await running.close();
      process.exit(0);
    };
    process.on("SIGINT", () => void stop("SIGINT"));
    process.on("SIGTERM", () => void stop("SIGTERM"));
  };
  run().catch((error: unknown) => {
    const message = error instanceof ConfigError ? `configuration error: ${error.message}` : `${options.failure}: ${(error as Error)?.message ?? error}`;
    logger.error(message);
    process.exit(1);
  });
}
