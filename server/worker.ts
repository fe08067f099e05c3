import { ConfigError, loadConfig } from "./config";
import { openStorage } from "./storage";
import { ConnectorRegistry } from "./connectors/registry";
import { driveConnectors } from "./connectors/gdrive/drive-connectors";
import { BullmqJobQueue } from "./ingest/bullmq-job-queue";
import { ingestHandler } from "./ingest/ingest-job";
import { ParserPool } from "./ingest/parse/parser-pool";
import { openRedis } from "./redis/redis-connection";
import { consoleLogger as logger } from "./logger";

/** `npm run worker`: takes ingestion jobs from the team queue (REDIS_URL); no HTTP server. Stops cleanly on SIGINT/SIGTERM. */
async function main(): Promise<void> {
  const config = loadConfig();
  if (!config.redisUrl) throw new ConfigError("REDIS_URL must be set: a worker takes jobs from the team queue in Redis");
  const { db, index, secrets } = await openStorage(config, logger);
  const parsers = new ParserPool();
  const connectors = new ConnectorRegistry(secrets, config.smbTimeoutMs, driveConnectors(config.google, secrets));
  const redis = openRedis({ redisUrl: config.redisUrl, redisSentinels: config.redisSentinels }, logger);
  const queue = new BullmqJobQueue(db, ingestHandler({ db, connectors, index, parsers }), logger, {
    redis,
    prefix: config.redisPrefix,
    runWorker: true,
  });
  await queue.start();
  process.stdout.write("worker ready\n");
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info(`${signal} received, stopping the worker`);
    // The running job stops between files and is recorded failed, as in the API process.
    await queue.stop();
    await redis.quit().catch(() => undefined);
    await parsers.close();
    await index.close();
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
