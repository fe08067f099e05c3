import { ConfigError, loadConfig } from "./config";
import { createLogger } from "./logger";
import { startServer } from "./server";
import { startHeapTrace } from "./diagnostics/heap-trace";
import { keepHeapFlagsToMainThread } from "./worker-script";
import { tuneMalloc } from "./memory/glibc-malloc";

// The command line's heap flags have sized this thread's heap; threads size their own.
keepHeapFlagsToMainThread();
// Before any worker thread starts: glibc makes arenas as threads first allocate (memory/glibc-malloc.ts).
const mallocTuning = tuneMalloc();

// At info until the configuration is read: a configuration error is reported at any LOG_LEVEL.
const logger = createLogger();
startHeapTrace("main");

/** `npm start`: serve the API (and UI) headless until SIGINT/SIGTERM. */
async function main(): Promise<void> {
  const config = loadConfig();
  logger.level = config.logLevel;
  logger.debug(mallocTuning.detail);
  const server = await startServer(config, logger);
  process.stdout.write(`listening on ${server.url}\n`);
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info(`${signal} received, shutting down`);
    await server.close();
    process.exit(0);
  };
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
}

main().catch((error: unknown) => {
  const message = error instanceof ConfigError ? `configuration error: ${error.message}` : `failed to start: ${(error as Error)?.message ?? error}`;
  logger.error(message);
  process.exit(1);
});
