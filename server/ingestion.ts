import type { Config } from "./config";
import { KindRegistry } from "./connectors/registry";
import { DatabaseOutage } from "./data/database-outage";
import { ingestHandler } from "./ingest/ingest-job";
import { refreshLinksOfServer, type GroupResolver } from "./accounts/smb-account-links";
import { OllamaClient } from "./llm/ollama.client";
import type { IngestQueue, JobHandler } from "./ingest/job-queue";
import { ParserPool } from "./ingest/parse/parser-pool";
import type { Logger } from "./logger";
import type { Storage } from "./storage";
import { clockOf } from "./schedules/clock";
import { Scheduler } from "./schedules/scheduler";
import type { DiskGuard } from "./disk/disk-space";
import type { JobThreads } from "./ingest/job-thread";
import type { BatchPolicy } from "./ingest/batched-index-writer";

export interface Ingestion {
  kinds: KindRegistry;
  queue: IngestQueue;
  /** Starts pipelines' scheduled runs through the queue; start it once the queue has started. */
  scheduler: Scheduler;
  /** Stops the scheduler, the queue (the running job fails durably), the job thread and the parser threads. */
  close(): Promise<void>;
}

/** What of the ingestion wiring depends on the mode: chosen by the composition root (composition/compose.ts). */
export interface IngestionParts {
  /** DATA_DIR's free-space minimum; null where nothing indexed is kept under DATA_DIR (a team server on PostgreSQL). */
  disk: DiskGuard | null;
  /** Where a job's data path runs off this thread (the SQLite index's writer thread to talk to); absent: on this thread. */
  threads?: JobThreads;
  /** How a job batches its index writes (a team server's database); absent: PARALLEL_BATCHES. */
  batching?: BatchPolicy;
  /** The queue of this mode, around the job handler built here. */
  queue(handler: JobHandler, outage: DatabaseOutage): IngestQueue;
}

/**
 * The ingestion wiring of every process, API and worker alike: the source kinds, the parser
 * pool, the job handler and its queue, with the mode's parts given by the composition root.
 */
export function openIngestion(config: Config, { db, index, vectors, secrets }: Storage, logger: Logger, parts: IngestionParts): Ingestion {
  const parsers = new ParserPool({ ocr: config.ocr });
  const kinds = new KindRegistry({ secrets, config });
  const outage = new DatabaseOutage(config.dbOutageGraceMs, (message) => logger.warn(`ingestion: ${message}`));
  const embedder = new OllamaClient(config.ollamaHost.replace(/\/$/, ""));
  const { disk, threads, batching } = parts;
  // A run of a source with the file server's permissions first re-resolves the groups of the Windows accounts linked for its server.
  const refreshAccountLinks = async (resolver: GroupResolver, server: string) => void (await refreshLinksOfServer(db, resolver, server));
  const handler = ingestHandler({ db, connectors: kinds, index, parsers, disk, vectors, embedder, threads, batching, refreshAccountLinks });
  const queue = parts.queue(handler, outage);
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
