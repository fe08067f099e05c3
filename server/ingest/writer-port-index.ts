import crypto from "node:crypto";
import type { MessagePort } from "node:worker_threads";
import type { IndexWriterJobCalls } from "../search/index-writer.worker";
import type { DocumentHeader, DocumentInput, EmptyFile, IndexedState, PermissionsUpdate, StagedDocument, StoredAcl } from "../search/search-index";
import { stagedDocument } from "../search/staged-document";
import type { IngestIndex } from "./sync-source";
import type { CallReply } from "../threads/pending-calls";
import { Caller, type Args, type Method, type Result } from "../threads/rpc";
import { INDEX_ERROR_KINDS } from "../search/index-damage";
import { GROUP_COMMIT, type BatchPolicy } from "./batched-index-writer";

/**
 * The collection index as an ingestion job's own thread sees it: its writes, and the indexed
 * state it starts from, go straight to the index writer thread over a channel of their own
 * (ThreadedSqliteIndex.writerPort); setting a damaged file aside, which every thread holding it
 * must take part in, goes to the API's thread (`moveAside`).
 */
export class WriterPortIndex implements IngestIndex {
  /** One writer thread takes every write of the file, one after the other: batches grow to its pace. */
  readonly batching: BatchPolicy = GROUP_COMMIT;
  private readonly writer: Caller<IndexWriterJobCalls>;
  private stopped: Error | null = null;

  constructor(
    private readonly port: MessagePort,
    readonly moveAside: (collectionId: string) => Promise<string | null>,
  ) {
    this.writer = new Caller<IndexWriterJobCalls>((message, transfer) => port.postMessage(message, transfer), INDEX_ERROR_KINDS);
    port.on("message", (reply: CallReply) => void this.writer.settle(reply));
    // The writer thread died (it is started again for the next caller): what it had fails, and so does what comes after.
    port.on("close", () => this.fail(new Error("The index writer stopped")));
  }

  private fail(error: Error): void {
    this.stopped ??= error;
    this.writer.failAll(error);
  }

  private call<M extends Method<IndexWriterJobCalls>>(method: M, ...args: Args<IndexWriterJobCalls, M>): Promise<Result<IndexWriterJobCalls, M>> {
    if (this.stopped) return Promise.reject(this.stopped);
    return this.writer.callWith(undefined, undefined, method, args);
  }

  /** Read on the writer's connection, which the job's writes then use: no turn of the API's thread. */
  indexedState(collectionId: string, sourceId: string): Promise<Map<string, IndexedState>> {
    return this.call("indexedState", collectionId, sourceId);
  }

  /** The collection's stored ACLs, read where its indexed state is (a run trusting change times compares share DACLs with them). */
  acls(collectionId: string): Promise<{ version: string; acls: StoredAcl[] }> {
    return this.call("acls", collectionId);
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

  markEmpty(collectionId: string, sourceId: string, files: EmptyFile[]): Promise<void> {
    return this.call("markEmpty", collectionId, sourceId, files);
  }

  updatePermissions(collectionId: string, sourceId: string, updates: PermissionsUpdate[]): Promise<void> {
    return this.call("updatePermissions", collectionId, sourceId, updates);
  }

  /** Behind the job's writes on the same channel, so it runs once they are all committed; answered before the settle itself runs (decision 0536). */
  settleWrites(collectionId: string): Promise<unknown> {
    return this.call("settleWrites", collectionId);
  }

  /** Lets go of the channel; the writer thread stays. */
  close(): void {
    this.port.close();
  }
}
