import crypto from "node:crypto";
import type { MessagePort } from "node:worker_threads";
import type { WriterReply, WriterRequest } from "../search/index-writer.worker";
import type { DocumentHeader, DocumentInput, IndexedState, StagedDocument } from "../search/search-index";
import { stagedDocument } from "../search/staged-document";
import type { IngestIndex } from "./sync-source";
import { PendingCalls } from "../threads/pending-calls";
import { INDEX_ERROR_KINDS } from "../search/index-damage";
import type { BatchPolicy } from "./batched-index-writer";
import type { JobWrites } from "./job-thread-protocol";

/** What an ingestion job's thread asks the API's thread for (reads on its connection, setting a damaged file aside). */
export interface AskIndex {
  indexedState(collectionId: string, sourceId: string): Promise<Map<string, IndexedState>>;
  moveAside(collectionId: string): Promise<string | null>;
}

/**
 * What a job's thread sends over its writer channel: the index writer thread's requests
 * (index-writer.worker.ts), keyed the same way (a staged document by the id made here), and
 * settleWrites where the engine settles its writes (only answered on the API's thread, PostgreSQL).
 */
export type JobWriteRequest = Omit<WriterRequest, "method"> & {
  method: Exclude<WriterRequest["method"], "release" | "upgrade" | "close"> | "settleWrites";
};

/**
 * The collection index as an ingestion job's own thread sees it: writes go over a channel of
 * their own, straight to SQLite's index writer thread (ThreadedSqliteIndex.writerPort) or to
 * the API's thread, which makes PostgreSQL's (index-port-server.ts); the two reads a job makes
 * once go to the API's thread, which holds the read connection.
 */
export class WriterPortIndex implements IngestIndex {
  /** GROUP_COMMIT for SQLite's writer thread (its batches grow to its pace), PARALLEL_BATCHES for PostgreSQL. */
  readonly batching: BatchPolicy;
  /** Present where the engine defers maintenance to the job's end (PostgreSQL); SQLite's writer defers none. */
  readonly settleWrites?: () => Promise<void>;
  private readonly calls = new PendingCalls(INDEX_ERROR_KINDS);
  private stopped: Error | null = null;

  constructor(
    private readonly port: MessagePort,
    private readonly ask: AskIndex,
    writes: JobWrites,
  ) {
    this.batching = writes.batching;
    if (writes.settleWrites) this.settleWrites = () => this.call("settleWrites");
    port.on("message", (reply: WriterReply) => void this.calls.settle(reply));
    // The writer thread died (it is started again for the next caller): what it had fails, and so does what comes after.
    port.on("close", () => this.fail(new Error("The index writer stopped")));
  }

  private fail(error: Error): void {
    this.stopped ??= error;
    this.calls.failAll(error);
  }

  private call<T>(method: JobWriteRequest["method"], ...args: unknown[]): Promise<T> {
    if (this.stopped) return Promise.reject(this.stopped);
    return this.calls.call<T>(undefined, (id) => this.port.postMessage({ id, method, args } satisfies JobWriteRequest));
  }

  indexedState(collectionId: string, sourceId: string): Promise<Map<string, IndexedState>> {
    return this.ask.indexedState(collectionId, sourceId);
  }

  moveAside(collectionId: string): Promise<string | null> {
    return this.ask.moveAside(collectionId);
  }

  async upsertDocument(collectionId: string, doc: DocumentInput): Promise<string> {
    return (await this.upsertDocuments(collectionId, [doc]))[0];
  }

  upsertDocuments(collectionId: string, docs: DocumentInput[]): Promise<string[]> {
    return this.call("upsertDocuments", collectionId, docs);
  }

  async stageDocument(collectionId: string, doc: DocumentHeader): Promise<StagedDocument> {
    return stagedDocument(crypto.randomUUID(), {
      add: (id, chunks) => this.call("stageChunks", collectionId, id, doc, chunks),
      commit: (id, chunkCount) => this.call("commitStaged", collectionId, id, doc, chunkCount),
      discard: (id) => this.call("discardStaged", collectionId, id),
    });
  }

  removeUnfinished(collectionId: string): Promise<void> {
    return this.call("removeUnfinished", collectionId);
  }

  removeDocuments(collectionId: string, sourceId: string, paths: string[]): Promise<void> {
    return this.call("removeDocuments", collectionId, sourceId, paths);
  }

  /** Lets go of the channel; the writer thread stays. */
  close(): void {
    this.port.close();
  }
}
