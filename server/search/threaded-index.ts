import { MessageChannel, Worker, type MessagePort } from "node:worker_threads";
import { WORKER_YOUNG_GENERATION_MB, workerScript } from "../worker-script";
import type { IndexWriterCalls } from "./index-writer.worker";
import crypto from "node:crypto";
import type {
  ChunkInput,
  ChunkKey,
  CollectionCountRequest,
  KeyedChunk,
  CollectionStats,
  DocumentHeader,
  DocumentInput,
  DocumentSummary,
  EmptyFile,
  IndexedState,
  PermissionsUpdate,
  ReadableFilter,
  SearchHit,
  SearchIndex,
  SearchOptions,
  StagedDocument,
  StoredAcl,
} from "./search-index";
import { stagedDocument } from "./staged-document";
import { SqliteFtsIndex } from "./sqlite";
import { INDEX_ERROR_KINDS, IndexDamagedError } from "./index-damage";
import type { CallReply } from "../threads/pending-calls";
import { Caller, type Args, type Method, type Result } from "../threads/rpc";
import { IndexReaderPool } from "./index-reader-pool";
import { SearchResultCache } from "./search-result-cache";

const WORKER = workerScript(__filename, "index-writer.worker");
/** Document pages ending within this many rows are read on the caller's thread (listDocuments). */
const MAIN_THREAD_PAGE_ROWS = 2_000;

/**
 * The SQLite FTS5 index with its writes on a worker thread and its reads on the caller's:
 * SQLite's WAL lets both connections work on a file at once, so searches and the API stay
 * quick while an ingestion job indexes thousands of chunks. Only the writer thread creates a
 * file and its tables; every other connection is read-only and takes a file whose schema is not
 * committed yet for an empty collection (a collection's first write races its first listing).
 */
export class ThreadedSqliteIndex implements SearchIndex {
  /**
   * The caller's thread: index status and counts for listings, the indexed state of a job run on
   * this thread (a job on its own thread reads it on the writer's, over writerPort); read-only.
   * It runs no quick_check: that reads every page of the file, 0.2 to 0.4 s of this thread for a
   * 1,700-file collection, during which no request moved (the load bench's answers over 1 s at
   * an ingestion's start, issue 20). Every read here first has a reader thread check the file
   * (upgraded()); damage found reaches this connection (noteDamaged) before the read goes on.
   */
  private readonly reader: SqliteFtsIndex;
  private readonly dir: string;
  /** The writer thread; null until first needed and after it stopped (the next call starts another). */
  private worker: Worker | null = null;
  /** Calls to the writer thread, each with its first argument (the collection, for damage found) kept for its answer. */
  private readonly writes = new Caller<IndexWriterCalls, unknown>((message, transfer) => this.worker?.postMessage(message, transfer), INDEX_ERROR_KINDS);
  private closed = false;

  /** Searches and document pages run on reader threads (index-reader-pool.ts); the rest reads on the caller's thread. */
  private readonly readers: IndexReaderPool;

  /** Recent search results, each valid while its collection file is unchanged; null with SEARCH_CACHE_MB=0. */
  private readonly results: SearchResultCache | null;

  /** `readers` and `searchCacheBytes` from SEARCH_READERS, SEARCH_QUEUE_LIMIT and SEARCH_CACHE_MB (their defaults live in config.ts only). */
  constructor(options: { dir: string; readers: { threads: number; queueLimit: number }; searchCacheBytes: number }) {
    this.reader = new SqliteFtsIndex({ dir: options.dir, readOnly: true, smallCache: true });
    this.dir = options.dir;
    this.readers = new IndexReaderPool({ dir: options.dir, ...options.readers });
    this.results = options.searchCacheBytes > 0 ? new SearchResultCache(options.searchCacheBytes) : null;
  }

  private spawn(): Worker {
    const worker = new Worker(WORKER.file, {
      workerData: { dir: this.dir },
      execArgv: WORKER.execArgv,
      resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB },
    });
    worker.on("message", (reply: CallReply) => {
      const settled = this.writes.settle(reply);
      if (settled?.error instanceof IndexDamagedError && typeof settled.meta === "string") this.noteDamaged(settled.meta);
    });
    // A writer that dies (out of memory, an uncaught error) fails what it had, not the process;
    // the next write starts a new one, so one bad moment does not stop every later job.
    const fail = (error: Error) => {
      if (this.worker !== worker) return;
      this.worker = null;
      this.writes.failAll(new Error(`The index writer stopped: ${error.message}`));
    };
    worker.on("error", fail);
    worker.on("exit", (code) => fail(new Error(`exit code ${code}`)));
    // An idle writer must not keep the process alive.
    worker.unref();
    return worker;
  }

  /** The writer found the collection's file damaged: the reading side must stop trusting its cached pages of that file too. */
  noteDamaged(collectionId: string): void {
    this.checked.delete(collectionId);
    this.results?.forget(collectionId);
    void this.reader.markDamaged(collectionId);
    void this.readers.broadcast("markDamaged", collectionId);
  }

  /**
   * A channel of its own to the writer thread, for another thread (an ingestion job's): its
   * writes, and the read of the indexed state it starts from, reach the writer and are answered
   * without a turn of this thread's event loop. It closes when the writer stops. Damage found through it reaches noteDamaged through
   * the job: it sets the file aside (moveAside) or fails with IndexDamagedError (job-thread.ts).
   */
  writerPort(collectionId: string): MessagePort {
    if (this.closed) throw new Error("The index is closed");
    this.worker ??= this.spawn();
    const { port1, port2 } = new MessageChannel();
    // A reader has checked the file since this process started (a listing's upgraded()): the writer need not check it again.
    this.writes.noteWith([port2], "connect", [port2, this.checked.has(collectionId) ? [collectionId] : []]);
    return port1;
  }

  private call<M extends Method<IndexWriterCalls>>(method: M, ...args: Args<IndexWriterCalls, M>): Promise<Result<IndexWriterCalls, M>> {
    if (this.closed) return Promise.reject(new Error("The index is closed"));
    this.worker ??= this.spawn();
    return this.writes.callWith(args[0], undefined, method, args);
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

  /** On the writer thread, after the job's writes queued before it; answered at once, the settle running right after (index-writer.worker.ts, decision 0536). */
  async settleWrites(collectionId: string): Promise<unknown> {
    this.reader.filePath(collectionId);
    const answer = await this.call("settleWrites", collectionId);
    this.noteWritten(collectionId);
    return answer;
  }

  /**
   * A job wrote the collection's file through this process's writer thread and ended without
   * finding it damaged: the writer checked the file as it opened it (or made it), brought it to
   * this build's schema, and every change since is its own. A first read here needs no reader's
   * quick_check then, which reads every page: right after a job's end, before the settle has
   * written the clean mark, the first search paid 0.7-1.5 s for it on the bench's collections
   * (decision 0541). Damage found later is still caught (noteDamaged).
   */
  noteWritten(collectionId: string): void {
    this.reader.filePath(collectionId);
    this.current.add(collectionId);
    this.checked.add(collectionId);
  }

  removeDocuments(collectionId: string, sourceId: string, paths: string[]): Promise<void> {
    this.reader.filePath(collectionId);
    return this.call("removeDocuments", collectionId, sourceId, paths);
  }

  markEmpty(collectionId: string, sourceId: string, files: EmptyFile[]): Promise<void> {
    this.reader.filePath(collectionId);
    return this.call("markEmpty", collectionId, sourceId, files);
  }

  async indexedState(collectionId: string, sourceId: string): Promise<Map<string, IndexedState>> {
    this.reader.filePath(collectionId);
    await this.upgraded(collectionId);
    return this.reader.indexedState(collectionId, sourceId);
  }

  async documentChunks(collectionId: string, documentId: string): Promise<ChunkInput[]> {
    this.reader.filePath(collectionId);
    await this.upgraded(collectionId);
    return this.reader.documentChunks(collectionId, documentId);
  }

  async chunksByKey(collectionId: string, chunks: ChunkKey[]): Promise<Array<KeyedChunk | null>> {
    this.reader.filePath(collectionId);
    await this.upgraded(collectionId);
    return this.reader.chunksByKey(collectionId, chunks);
  }

  /**
   * A page near the start (a UI's first pages) is read on this thread: a tenth of a millisecond,
   * less than the round trip to a reader thread, which under load waits behind every other
   * request's turn of the event loop. A deep OFFSET walks that many rows, so it goes to a reader.
   */
  async listDocuments(collectionId: string, offset: number, limit: number, filter?: ReadableFilter): Promise<{ total: number; items: DocumentSummary[] }> {
    this.reader.filePath(collectionId);
    await this.upgraded(collectionId);
    if (offset + limit <= MAIN_THREAD_PAGE_ROWS) return this.reader.listDocuments(collectionId, offset, limit, filter);
    return this.readers.run("listDocuments", collectionId, offset, limit, filter);
  }

  updatePermissions(collectionId: string, sourceId: string, updates: PermissionsUpdate[]): Promise<void> {
    this.reader.filePath(collectionId);
    return this.call("updatePermissions", collectionId, sourceId, updates);
  }

  /** Read on this thread: a few hundred small rows at most (most files share a few ACLs), and only when their version moved (access/document-permissions.ts). */
  async acls(collectionId: string): Promise<{ version: string; acls: StoredAcl[] }> {
    this.reader.filePath(collectionId);
    await this.upgraded(collectionId);
    return this.reader.acls(collectionId);
  }

  /** Read on the caller's thread, as aclVersion: each collection's file once. */
  async aclVersions(collectionIds: readonly string[]): Promise<string[]> {
    return Promise.all(collectionIds.map((id) => this.aclVersion(id)));
  }

  /** Each collection's file brought up to date and counted on the caller's thread, as stats. */
  async statsOfMany(requests: ReadonlyArray<CollectionCountRequest>): Promise<CollectionStats[]> {
    return Promise.all(requests.map((r) => this.stats(r.collectionId, r.filter)));
  }

  async aclVersion(collectionId: string): Promise<string> {
    this.reader.filePath(collectionId);
    await this.upgraded(collectionId);
    return this.reader.aclVersion(collectionId);
  }

  /** A page of vector hits' documents, by primary key: on this thread, like the first pages of a listing. */
  async readableDocuments(collectionId: string, documentIds: string[], filter: ReadableFilter): Promise<Set<string>> {
    this.reader.filePath(collectionId);
    await this.upgraded(collectionId);
    return this.reader.readableDocuments(collectionId, documentIds, filter);
  }

  /**
   * A repeated search answers from the result cache while the collection file is unchanged: its
   * data version is read here, on this thread's connection, before the search runs, so a commit
   * during the search leaves the entry older than the file and it is not used again.
   */
  async search(collectionId: string, query: string, topK: number, options?: SearchOptions): Promise<SearchHit[]> {
    this.reader.filePath(collectionId);
    await this.upgraded(collectionId);
    const version = this.results ? this.reader.dataVersion(collectionId) : null;
    if (version === null) return this.readers.run("search", collectionId, query, topK, options);
    const key = SearchResultCache.key(collectionId, query, topK, options);
    const cached = this.results!.get(key, version);
    if (cached) return cached as SearchHit[];
    // Many clients asking the same at once (a shared link, a team's usual query) wait for one search.
    const flightKey = `${version}\u0000${key}`;
    let flight = this.inFlight.get(flightKey);
    if (!flight) {
      flight = this.readers
        .run("search", collectionId, query, topK, options)
        .then((hits) => this.results!.set(key, collectionId, version, hits) as SearchHit[])
        .finally(() => this.inFlight.delete(flightKey));
      this.inFlight.set(flightKey, flight);
    }
    return flight;
  }

  /** Searches running on a reader thread, by version and cache key: an identical search joins one. */
  private readonly inFlight = new Map<string, Promise<SearchHit[]>>();

  /** Collections whose file was checked and is of this build's schema (or had no file) when first read in this process. */
  private readonly current = new Set<string>();
  /** Of those, the ones a reader thread's quick_check found sound (files that existed and were current). */
  private readonly checked = new Set<string>();

  /**
   * A collection's first read in this process: a reader thread checks its file (quick_check),
   * off this thread, and off the writer's, where a running job's queued batches held a listing
   * up for 1.5 s. The read-only threads cannot upgrade a file of an older schema (they would
   * answer nothing from it): such a file (rare: after an update) is opened by the writer first,
   * which checks it as it opens it.
   */
  private async upgraded(collectionId: string): Promise<void> {
    if (this.current.has(collectionId)) return;
    let state: "missing" | "older" | "current";
    try {
      state = await this.readers.check(collectionId);
    } catch (error) {
      if (error instanceof IndexDamagedError) this.noteDamaged(collectionId);
      throw error;
    }
    if (state === "older") await this.call("upgrade", collectionId);
    if (state === "current") this.checked.add(collectionId);
    this.current.add(collectionId);
  }

  /** The caller's read-only connection counts, once the writer has brought an older file up to date; a damaged file lists as damaged. */
  async stats(collectionId: string, filter?: ReadableFilter): Promise<CollectionStats> {
    this.reader.filePath(collectionId);
    try {
      await this.upgraded(collectionId);
    } catch (error) {
      if (!(error instanceof IndexDamagedError)) throw error;
    }
    return this.reader.stats(collectionId, filter);
  }

  /** Every thread lets go of the file before it is deleted. */
  async drop(collectionId: string): Promise<void> {
    this.reader.filePath(collectionId);
    this.current.delete(collectionId);
    this.checked.delete(collectionId);
    this.results?.forget(collectionId);
    await this.call("release", collectionId);
    await this.readers.broadcast("release", collectionId);
    await this.reader.drop(collectionId);
  }

  /** Every thread lets go of the damaged file before it is moved. */
  async moveAside(collectionId: string): Promise<string | null> {
    this.reader.filePath(collectionId);
    this.current.delete(collectionId);
    this.checked.delete(collectionId);
    this.results?.forget(collectionId);
    await this.call("release", collectionId);
    await this.readers.broadcast("release", collectionId);
    return this.reader.moveAside(collectionId);
  }

  /** The writer's connections close last: the last connection to a file folds its WAL back in, which a read-only one cannot. */
  async close(): Promise<void> {
    this.closed = true;
    await this.readers.close();
    await this.reader.close();
    const worker = this.worker;
    if (worker) {
      await this.writes.call("close").catch(() => undefined);
      this.worker = null;
      await worker.terminate();
    }
  }
}
