import os from "node:os";
import type { Redis } from "ioredis";
import { ConfigError, type Config, type Mode } from "../config";
import type { Logger } from "../logger";
import { MemoryAttemptStore, type AttemptStore } from "../accounts/attempt-store";
import { RedisAttemptStore } from "../accounts/redis-attempt-store";
import { databaseOnThisMachine } from "../data/database-host";
import { DiskGuard } from "../disk/disk-space";
import { databaseBatches } from "../ingest/batched-index-writer";
import { BullmqJobQueue } from "../ingest/bullmq-job-queue";
import { JobQueue } from "../ingest/job-queue";
import { JobThreads } from "../ingest/job-thread";
import { openIngestion, type Ingestion, type IngestionParts } from "../ingestion";
import { acquireInstanceLock, type InstanceLock } from "../instance-lock";
import { ModelsService } from "../llm/models.service";
import { modelsOptions } from "../llm/models.options";
import { SharedPulls } from "../llm/shared-pulls";
import { openRedis } from "../redis/redis-connection";
import { openSecretStore } from "../secrets/secrets";
import { keepDataDirPrivate, openPostgresStorage, openSqliteStorage, type Storage, type StorageLogger } from "../storage";

/** The mode decision, made here once: the rest of the code is handed what was built, or this value. */
export function modeOf(config: Pick<Config, "databaseUrl" | "redisUrl">): Mode {
  return { database: config.databaseUrl ? "postgres" : "sqlite", queue: config.redisUrl ? "redis" : "in-process" };
}

/** Everything a process runs on, built from the validated configuration. */
export interface Composition {
  config: Config;
  mode: Mode;
  storage: Storage;
  ingestion: Ingestion;
  /** Team mode's one connection (queue, pull locks, sign-in counts, readiness); null on the in-process queue. */
  redis: Redis | null;
  /** Starts the queue (which first fails the jobs a dead process left running), then the schedules. */
  start(): Promise<void>;
  /** Shuts down in order: ingestion first (the running job fails durably), then Redis, the index, vectors, the database. */
  close(): Promise<void>;
}

/** An API process's composition: the worker's, plus what only requests use. */
export interface ApiComposition extends Composition {
  models: ModelsService;
  /** Where sign-in and sign-up attempts are counted: Redis in team mode, else this process's memory. */
  attemptStore: AttemptStore;
  /** Tells the instance lock the address, once the server listens (what a second server is shown). */
  listening(url: string): void;
  /** As Composition.close, with models and shared pulls after ingestion and `closeHttp` before Redis. */
  close(closeHttp?: () => Promise<void>): Promise<void>;
}

/** `npm start` and the Electron shell: serves the API, and takes jobs unless SLUICE_WORKER=0 in team mode. */
export function composeApi(config: Config, logger: Logger): Promise<ApiComposition> {
  return compose(config, logger, "api") as Promise<ApiComposition>;
}

/** `npm run worker`: takes jobs from the team queue, serves nothing. */
export function composeWorker(config: Config, logger: Logger): Promise<Composition> {
  return compose(config, logger, "worker");
}

async function compose(config: Config, logger: Logger, role: "api" | "worker"): Promise<Composition | ApiComposition> {
  const mode = modeOf(config);
  if (role === "worker" && !config.redisUrl) throw new ConfigError("REDIS_URL must be set: a worker takes jobs from the team queue in Redis");
  // One server per DATA_DIR on the desktop (one job at a time); team mode (REDIS_URL) shares storage on purpose.
  const lock: InstanceLock | null = config.redisUrl ? null : acquireInstanceLock(config.dataDir);
  let storage: Storage | null = null;
  try {
    const engines = await openEngines(config, logger);
    storage = engines.storage;
    const { db } = storage;
    const redis = config.redisUrl ? openRedis({ redisUrl: config.redisUrl, redisSentinels: config.redisSentinels }, logger) : null;
    // A worker always takes jobs; an API process in team mode does unless SLUICE_WORKER=0.
    const runWorker = role === "worker" || config.runWorker;
    const ingestion = openIngestion(config, storage, logger, {
      ...engines.parts,
      queue: (handler, outage) =>
        redis
          ? new BullmqJobQueue(db, handler, logger, { redis, prefix: config.redisPrefix, runWorker, outage, concurrency: config.ingestConcurrency })
          : new JobQueue(db, handler, logger, outage),
    });
    const sharedPulls = role === "api" && redis ? SharedPulls.open(redis, config.redisPrefix, db, logger) : undefined;
    const models = role === "api" ? new ModelsService(db, modelsOptions(config), logger, sharedPulls) : null;
    const opened = storage;
    const close = async (closeHttp?: () => Promise<void>) => {
      try {
        await ingestion.close();
        // Ends every POST /models stream with an error event, so the HTTP server can close.
        await models?.close();
        await sharedPulls?.close();
        await closeHttp?.();
        // Redis unreachable at shutdown must not keep the database open.
        await redis?.quit().catch(() => undefined);
        await closeStorage(opened);
      } finally {
        lock?.release();
      }
    };
    const composition: Composition = {
      config,
      mode,
      storage,
      ingestion,
      redis,
      start: async () => {
        await ingestion.queue.start();
        ingestion.scheduler.start();
      },
      close,
    };
    if (!models) return composition;
    const attemptStore = redis ? new RedisAttemptStore(redis, config.redisPrefix) : new MemoryAttemptStore();
    return { ...composition, models, attemptStore, listening: (url: string) => lock?.setUrl(url) };
  } catch (error) {
    if (storage) await closeStorage(storage).catch(() => undefined);
    lock?.release();
    throw error;
  }
}

/** The mode's storage alone (database, index, vectors, secrets), opened as a process opens it: for tools and tests beside a server. */
export async function openStorage(config: Config, logger: StorageLogger): Promise<Storage> {
  const { storage, parts } = await openEngines(config, logger);
  await parts.threads?.close();
  return storage;
}

/** The storage engines of the mode, and what of the ingestion wiring goes with them. */
async function openEngines(config: Config, logger: StorageLogger): Promise<{ storage: Storage; parts: Omit<IngestionParts, "queue"> }> {
  keepDataDirPrivate(config.dataDir, logger);
  const local = await openSecretStore({ dataDir: config.dataDir, logger, preferKeychain: config.secretsBackend === "auto" });
  if (config.databaseUrl) {
    const storage = await openPostgresStorage(config, config.databaseUrl, local, logger);
    // Nothing indexed is kept under DATA_DIR (no free-space minimum), and jobs run on this thread.
    return { storage, parts: { disk: null, batching: teamBatches(config.databaseUrl, logger) } };
  }
  const storage = await openSqliteStorage(config, local);
  const disk = new DiskGuard(config.dataDir, config.minFreeDiskBytes);
  // A job's data path on a thread of its own, talking to the SQLite index's writer thread.
  return { storage, parts: { disk, threads: new JobThreads(storage.index, { dir: disk.dir, minFreeBytes: disk.minFreeBytes }, { ocr: config.ocr }) } };
}

/** How a job batches its writes to the team's database: one at a time when the database shares a small machine with this process. */
function teamBatches(url: string, logger: StorageLogger) {
  const cores = os.availableParallelism();
  const batching = databaseBatches(cores, databaseOnThisMachine(url));
  if (batching.writesInFlight === 1) {
    logger.info?.(`ingestion: PostgreSQL runs on this machine, which has ${cores} core(s): one index write at a time, leaving a core for the API`);
  }
  return batching;
}

async function closeStorage({ db, index, vectors }: Storage): Promise<void> {
  await index.close();
  await vectors.close();
  if (db.isInitialized) await db.destroy();
}
