import os from "node:os";
import type { Redis } from "ioredis";
import type { Config } from "./config";
import { KindRegistry } from "./connectors/registry";
import { DatabaseOutage } from "./data/database-outage";
import { BullmqJobQueue } from "./ingest/bullmq-job-queue";
import { ingestHandler } from "./ingest/ingest-job";
import { OllamaClient } from "./llm/ollama.client";
import { JobQueue, type IngestQueue } from "./ingest/job-queue";
import { ParserPool } from "./ingest/parse/parser-pool";
import type { Logger } from "./logger";
import type { Storage } from "./storage";
import { clockOf } from "./schedules/clock";
import { Scheduler } from "./schedules/scheduler";
import { DiskGuard } from "./disk/disk-space";
import { JobThreads } from "./ingest/job-thread";
import { ThreadedSqliteIndex } from "./search/threaded-index";
import { databaseBatches } from "./ingest/batched-index-writer";
import { databaseOnThisMachine } from "./data/database-host";

export interface Ingestion {
  kinds: KindRegistry;
  queue: IngestQueue;
  /** Starts pipelines' scheduled runs through the queue; start it once the queue has started. */
  scheduler: Scheduler;
  /** Stops the scheduler, the queue (the running job fails durably), the job thread and the parser threads. */
  close(): Promise<void>;
}

/**
 * The ingestion wiring of every process, API and worker alike: the source kinds, the parser
 * pool, the job handler and its queue. Team mode (a Redis connection, from REDIS_URL) puts the queue on BullMQ, shared
 * by every API and worker process; `runWorker` says whether this process takes jobs.
 */
export function openIngestion(config: Config, { db, index, vectors, secrets }: Storage, logger: Logger, runWorker: boolean, redis: Redis | null): Ingestion {
  const parsers = new ParserPool();
  const kinds = new KindRegistry({ secrets, config });
  const outage = new DatabaseOutage(config.dbOutageGraceMs, (message) => logger.warn(`ingestion: ${message}`));
  // A team server on PostgreSQL keeps nothing it indexes under DATA_DIR: no minimum there.
  const disk = config.databaseUrl ? null : new DiskGuard(config.dataDir, config.minFreeDiskBytes);
  const embedder = new OllamaClient(config.ollamaHost.replace(/\/$/, ""));
  // A job's data path on a thread of its own needs the SQLite index's writer thread to talk to; on PostgreSQL it stays here.
  const threads = index instanceof ThreadedSqliteIndex ? new JobThreads(index, disk && { dir: disk.dir, minFreeBytes: disk.minFreeBytes }) : undefined;
  const cores = os.availableParallelism();
  const batching = config.databaseUrl ? databaseBatches(cores, databaseOnThisMachine(config.databaseUrl)) : undefined;
  if (batching?.writesInFlight === 1) {
    logger.info(`ingestion: PostgreSQL runs on this machine, which has ${cores} core(s): one index write at a time, leaving a core for the API`);
  }
  const handler = ingestHandler({ db, connectors: kinds, index, parsers, disk, vectors, embedder, threads, batching });
  const queue = redis
    ? new BullmqJobQueue(db, handler, logger, { redis, prefix: config.redisPrefix, runWorker, outage, concurrency: config.ingestConcurrency })
    : new JobQueue(db, handler, logger, outage);
  const scheduler = new Scheduler(db, queue, logger, { clock: clockOf(config), tickMs: config.schedulerTickMs });
  return {
    kinds,
    queue,
    scheduler,
    close: async () => {
      await scheduler.stop();
      await queue.stop();
      await threads?.close();
      await parsers.close();
    },
  };
}
