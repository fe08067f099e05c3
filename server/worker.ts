import { ConfigError, loadConfig } from "./config";
import { openStorage } from "./storage";
import { openIngestion } from "./ingestion";
import { openRedis } from "./redis/redis-connection";
import { createLogger } from "./logger";
import { keepHeapFlagsToMainThread } from "./worker-script";
import { tuneMalloc } from "./memory/glibc-malloc";

// The command line's heap flags have sized this thread's heap; threads size their own.
keepHeapFlagsToMainThread();
// Before any worker thread starts: glibc makes arenas as threads first allocate (memory/glibc-malloc.ts).
const mallocTuning = tuneMalloc();

// At info until the configuration is read: a configuration error is reported at any LOG_LEVEL.
const logger = createLogger();

/** `npm run worker`: takes ingestion jobs from the team queue (REDIS_URL); no HTTP server. Stops cleanly on SIGINT/SIGTERM. */
async function main(): Promise<void> {
  const config = loadConfig();
  logger.level = config.logLevel;
  logger.debug(mallocTuning.detail);
  if (!config.redisUrl) throw new ConfigError("REDIS_URL must be set: a worker takes jobs from the team queue in Redis");
  const storage = await openStorage(config, logger);
  const { db, index } = storage;
  const redis = openRedis({ redisUrl: config.redisUrl, redisSentinels: config.redisSentinels }, logger);
  const ingestion = openIngestion(config, storage, logger, true, redis);
  await ingestion.queue.start();
  ingestion.scheduler.start();
  process.stdout.write("worker ready\n");
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info(`${signal} received, stopping the worker`);
    // The running job stops between files and is recorded failed, as in the API process.
    await ingestion.close();
    await redis.quit().catch(() => undefined);
    await index.close();
    await storage.vectors.close();
    if (db.isInitialized) await db.destroy();
    process.exit(0);
  };
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
}

main().catch((error: unknown) => {
  const message = error instanceof ConfigError ? `configuration error: ${error.message}` : `worker failed to start: ${(error as Error)?.message ?? error}`;
  logger.error(message);
  process.exit(1);
});
