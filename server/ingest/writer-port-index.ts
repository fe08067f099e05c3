import crypto from "node:crypto";
import type { MessagePort } from "node:worker_threads";
import type { WriterReply, WriterRequest } from "../search/index-writer.worker";
import type { DocumentHeader, DocumentInput, IndexedState, StagedDocument } from "../search/search-index";
import { stagedDocument } from "../search/staged-document";
import type { IngestIndex } from "./sync-source";
import { PendingCalls } from "../threads/pending-calls";
import { INDEX_ERROR_KINDS } from "../search/index-damage";
import { GROUP_COMMIT, type BatchPolicy } from "./batched-index-writer";

/** What an ingestion job's thread asks the API's thread for (reads on its connection, setting a damaged file aside). */
export interface AskIndex {
  indexedState(collectionId: string, sourceId: string): Promise<Map<string, IndexedState>>;
  moveAside(collectionId: string): Promise<string | null>;
}

/**
 * The collection index as an ingestion job's own thread sees it: writes go straight to the
 * index writer thread over a channel of their own (ThreadedSqliteIndex.writerPort), the two
 * reads a job makes once go to the API's thread, which holds the read connection.
 */
export class WriterPortIndex implements IngestIndex {
  /** One writer thread takes every write of the file, one after the other: batches grow to its pace. */
  readonly batching: BatchPolicy = GROUP_COMMIT;
  private readonly calls = new PendingCalls(INDEX_ERROR_KINDS);
  private stopped: Error | null = null;

  constructor(
    private readonly port: MessagePort,
    private readonly ask: AskIndex,
  ) {
    port.on("message", (reply: WriterReply) => void this.calls.settle(reply));
    // The writer thread died (it is started again for the next caller): what it had fails, and so does what comes after.
    port.on("close", () => this.fail(new Error("The index writer stopped")));
  }

  private fail(error: Error): void {
    this.stopped ??= error;
    this.calls.failAll(error);
  }

  private call<T>(method: WriterRequest["method"], ...args: unknown[]): Promise<T> {
    if (this.stopped) return Promise.reject(this.stopped);
    return this.calls.call<T>(undefined, (id) => this.port.postMessage({ id, method, args } satisfies WriterRequest));
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
