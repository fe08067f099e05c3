import type { DataSource } from "typeorm";
import type { KindRegistry } from "../connectors/registry";
import type { GroupResolver } from "../accounts/smb-account-links";
import { Collection } from "../data/entities/collection.entity";
import { DataSourceRecord } from "../data/entities/data-source.entity";
import type { IngestJob } from "../data/entities/ingest-job.entity";
import { Pipeline } from "../data/entities/pipeline.entity";
import type { SearchIndex } from "../search/search-index";
import type { JobProgress } from "./job-progress";
import { JobInterrupted, type JobHandler } from "./job-queue";
import type { ParserPool } from "./parse/parser-pool";
import { OutageRetryingIndex } from "./outage-retrying-index";
import { isDiskFull, type DiskGuard } from "../disk/disk-space";
import type { VectorStore } from "../search/vector-store";
import { embedCollection, type Embedder } from "../search/embed-collection";
import { OllamaError } from "../llm/ollama.client";
import { syncSource } from "./sync-source";
import type { JobThreads } from "./job-thread";
import type { BatchPolicy } from "./batched-index-writer";

export interface IngestDeps {
  db: DataSource;
  connectors: KindRegistry;
  index: SearchIndex;
  parsers: ParserPool;
  /** DATA_DIR's free-space minimum; null where storage is not under DATA_DIR (a team server on PostgreSQL). */
  disk: DiskGuard | null;
  /** Where a job's data path runs off this thread (the SQLite index); absent: on this thread, as on a team server. */
  threads?: JobThreads;
  /** The embedding stage's store and model server (hybrid retrieval); absent: no embedding stage. */
  vectors?: VectorStore;
  embedder?: Embedder;
  /** How a job on this thread batches its index writes (databaseBatches on a team server); absent: PARALLEL_BATCHES. */
  batching?: BatchPolicy;
  /**
   * Re-resolves the group SIDs of every account linked for a file server, through the source's
   * kind's resolver (the source's own account, on SMB check threads): called once at the start of
   * each run of a source with the file server's permissions (the SMB account links'
   * refreshLinksOfServer, wired by the composition); absent: not done.
   */
  refreshAccountLinks?: (resolver: GroupResolver, server: string) => Promise<void>;
}

/**
 * One ingestion run of a pipeline: discover every file, then index new and changed files,
 * leave unchanged ones unread, and remove documents whose files are gone (sync-source.ts); then
 * embed what changed. The data path runs on a thread of its own where the source's kind and the
 * index allow it (job-thread.ts), else here; the job's row, its reads of the database and the
 * secret store stay on this thread either way.
 */
export function ingestHandler(deps: IngestDeps): JobHandler {
  return async (job, progress, signal) => {
    try {
      // Before anything is written: a job that cannot finish should not start filling the disk.
      await deps.disk?.assertRoom();
      // Every database read and write of the run rides out a short outage (DB_OUTAGE_GRACE_S).
      const retry = <T>(fn: () => Promise<T>) => progress.outage.run(fn, signal);
      const { source, collection } = await retry(() => loadPipeline(deps.db, job));
      const index = new OutageRetryingIndex(deps.index, progress.outage, signal);
      const permissionServer = await retry(() => deps.connectors.permissionServer(deps.db.manager, source));
      if (permissionServer !== null) await refreshLinks(deps, permissionServer, () => retry(() => deps.connectors.groupResolver(deps.db.manager, source)));
      const threads = deps.threads;
      const spec = threads ? await retry(() => deps.connectors.threadConnector(deps.db.manager, source)) : null;
      if (threads && spec) {
        await threads.run({ connector: spec, sourceId: source.id, collectionId: collection.id, permissionServer }, progress, signal);
      } else {
        const connector = await retry(() => deps.connectors.forSource(deps.db.manager, source));
        try {
          await syncSource({ ...deps, index }, connector, source.id, collection.id, progress, signal, permissionServer);
        } finally {
          await connector.close();
        }
      }
      await embeddingStage({ ...deps, index }, collection.id, progress, signal);
    } catch (error) {
      // A write that found the disk full, wherever it was (index thread, job thread, database): the cause and the space, not SQLite's words.
      if (deps.disk && isDiskFull(error)) throw await deps.disk.failure();
      throw error;
    }
  };
}

/**
 * The one call site of the account links' refresh (issue 33 item 4): before the files, so this
 * run's permissions are decided with the groups the server names now. A failure fails the run:
 * a person taken out of a group must not keep its files because the refresh did not happen. The
 * resolver talks to the server on threads of its own, in every mode (decision 0484).
 */
async function refreshLinks(deps: IngestDeps, server: string, resolverOf: () => Promise<GroupResolver | null>): Promise<void> {
  if (!deps.refreshAccountLinks) return;
  const resolver = await resolverOf();
  if (!resolver) return;
  try {
    await deps.refreshAccountLinks(resolver, server);
  } catch (error) {
    throw new Error(`The linked Windows accounts of ${server} could not be checked again: ${(error as Error).message}`);
  }
}

// ---- Embedding stage (hybrid retrieval, issue 23) ----

/**
 * After the files are indexed: where the collection has an embedding model (read now, so a
 * model set while the job ran counts), embed every chunk that has no vector yet, in batches,
 * with its own progress text (search/embed-collection.ts). A run that changed nothing embeds nothing.
 */
async function embeddingStage(deps: IngestDeps, collectionId: string, progress: JobProgress, signal: AbortSignal): Promise<void> {
  if (!deps.vectors || !deps.embedder) return;
  const { vectors, embedder } = deps;
  const collection = await progress.outage.run(() => deps.db.manager.findOne(Collection, { where: { id: collectionId } }), signal);
  const model = collection?.embeddingModel;
  if (!model) return;
  progress.at(`Embedding new and changed chunks with ${model}`);
  try {
    const report = await embedCollection({ index: deps.index, vectors, embedder }, collectionId, model, (text) => progress.at(text), signal);
    progress.at(`Embedded ${report.embedded} chunk(s) with ${model}`);
  } catch (error) {
    if (signal.aborted) throw new JobInterrupted();
    if (error instanceof OllamaError) throw new Error(`Embedding with ${model} failed: ${error.message}`);
    throw error;
  }
}

async function loadPipeline(db: DataSource, job: IngestJob) {
  const pipeline = await db.manager.findOne(Pipeline, { where: { id: job.pipelineId } });
  const source = pipeline && (await db.manager.findOne(DataSourceRecord, { where: { id: pipeline.dataSourceId } }));
  const collection = pipeline && (await db.manager.findOne(Collection, { where: { id: pipeline.collectionId } }));
  if (!pipeline || !source || !collection) throw new Error("The pipeline, its data source or its collection no longer exists");
  return { pipeline, source, collection };
}

