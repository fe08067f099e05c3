import { Worker } from "node:worker_threads";
import { WORKER_YOUNG_GENERATION_MB, workerScript } from "../worker-script";
import type { WriterReply, WriterRequest } from "./index-writer.worker";
import crypto from "node:crypto";
import type { CollectionStats, DocumentHeader, DocumentInput, DocumentSummary, IndexedState, SearchHit, SearchIndex, StagedDocument } from "./search-index";
import { stagedDocument } from "./staged-document";
import { SqliteFtsIndex } from "./sqlite-fts-index";
import { IndexReaderPool } from "./index-reader-pool";

const WORKER = workerScript(__filename, "index-writer.worker");

/**
 * The SQLite FTS5 index with its writes on a worker thread and its reads on the caller's:
 * SQLite's WAL lets both connections work on a file at once, so searches and the API stay
 * quick while an ingestion job indexes thousands of chunks.
 */
export class ThreadedSqliteIndex implements SearchIndex {
  private readonly reader: SqliteFtsIndex;
  private readonly worker: Worker;
  private readonly waiting = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  private nextId = 1;
  private failure: Error | null = null;

  /** Searches and document pages run on reader threads (index-reader-pool.ts); the rest reads on the caller's thread. */
  private readonly readers: IndexReaderPool;

  constructor(options: { dir: string; readers?: { threads: number; queueLimit: number } }) {
    this.reader = new SqliteFtsIndex({ dir: options.dir });
    this.readers = new IndexReaderPool({ dir: options.dir, threads: 2, queueLimit: 256, ...options.readers });
    this.worker = new Worker(WORKER.file, {
      workerData: { dir: options.dir },
      execArgv: WORKER.execArgv,
      resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB },
    });
    this.worker.on("message", (reply: WriterReply) => {
      const call = this.waiting.get(reply.id);
      this.waiting.delete(reply.id);
      if (reply.ok) call?.resolve(reply.result);
      else call?.reject(new Error(reply.message));
    });
    const fail = (error: Error) => {
      this.failure = new Error(`The index writer stopped: ${error.message}`);
      for (const call of this.waiting.values()) call.reject(this.failure);
      this.waiting.clear();
    };
    this.worker.on("error", fail);
    this.worker.on("exit", (code) => fail(new Error(`exit code ${code}`)));
    // An idle writer must not keep the process alive.
    this.worker.unref();
  }

  private call<T>(method: WriterRequest["method"], ...args: unknown[]): Promise<T> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.worker.postMessage({ id, method, args } satisfies WriterRequest);
    });
  }

  async upsertDocument(collectionId: string, doc: DocumentInput): Promise<string> {
    return (await this.upsertDocuments(collectionId, [doc]))[0];
  }

  upsertDocuments(collectionId: string, docs: DocumentInput[]): Promise<string[]> {
    this.reader.filePath(collectionId); // validates the id here, as every other method does
    return this.call("upsertDocuments", collectionId, docs);
  }

  async stageDocument(collectionId: string, doc: DocumentHeader): Promise<StagedDocument> {
    this.reader.filePath(collectionId);
    return stagedDocument(crypto.randomUUID(), {
      add: (id, chunks) => this.call("stageChunks", collectionId, id, doc, chunks),
      commit: (id, chunkCount) => this.call("commitStaged", collectionId, id, doc, chunkCount),
      discard: (id) => this.call("discardStaged", collectionId, id),
    });
  }

  removeUnfinished(collectionId: string): Promise<void> {
    this.reader.filePath(collectionId);
    return this.call("removeUnfinished", collectionId);
  }

  removeDocuments(collectionId: string, sourceId: string, paths: string[]): Promise<void> {
    this.reader.filePath(collectionId);
    return this.call("removeDocuments", collectionId, sourceId, paths);
  }

  indexedState(collectionId: string, sourceId: string): Promise<Map<string, IndexedState>> {
    return this.reader.indexedState(collectionId, sourceId);
  }

  listDocuments(collectionId: string, offset: number, limit: number): Promise<{ total: number; items: DocumentSummary[] }> {
    this.reader.filePath(collectionId);
    return this.readers.run("listDocuments", collectionId, offset, limit);
  }

  search(collectionId: string, query: string, topK: number): Promise<SearchHit[]> {
    this.reader.filePath(collectionId);
    return this.readers.run("search", collectionId, query, topK);
  }

  stats(collectionId: string): Promise<CollectionStats> {
    return this.reader.stats(collectionId);
  }

  /** Both threads let go of the file before it is deleted. */
  async drop(collectionId: string): Promise<void> {
    this.reader.filePath(collectionId);
    await this.call("release", collectionId);
    await this.readers.release(collectionId);
    await this.reader.drop(collectionId);
  }

  async close(): Promise<void> {
    if (!this.failure) await this.call("close").catch(() => undefined);
    await this.worker.terminate();
    await this.readers.close();
    await this.reader.close();
  }
}
