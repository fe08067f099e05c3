import type { MessagePort } from "node:worker_threads";
import type { ChunkInput, DocumentHeader, DocumentInput, StagedDocument } from "../search/search-index";
import { answerCall } from "../threads/pending-calls";
import type { IngestIndex } from "./sync-source";
import type { JobWriteRequest } from "./writer-port-index";

/**
 * The API's thread's end of a job thread's writer channel, for an engine whose writes are made
 * here (PostgreSQL: the pool and its connections live on this thread): each request the job
 * thread's WriterPortIndex sends is made on `index`, the index as that job sees it (an
 * OutageRetryingIndex, so a short outage is ridden out here as for a job on this thread), and
 * answered with its result or its error (a DatabaseConnectionLost keeps its class across).
 * Staged documents are keyed by the id the job thread made; the document's own id is the
 * engine's (commit answers it; the job does not use it). A staged document still open when the
 * channel closes (the job thread died or was ended) is discarded, so its connection goes back.
 */
export function serveIndexPort(port: MessagePort, index: IngestIndex): void {
  const staged = new Map<string, Promise<StagedDocument>>();

  /** The staged document for the key, started (stageDocument) by its first part or its commit. */
  const stage = (collectionId: string, key: string, header: DocumentHeader): Promise<StagedDocument> => {
    let doc = staged.get(key);
    if (!doc) {
      doc = index.stageDocument(collectionId, header);
      staged.set(key, doc);
      // One that could not start is forgotten: the job discards it (nothing to do) and moves on.
      doc.catch(() => {
        if (staged.get(key) === doc) staged.delete(key);
      });
    }
    return doc;
  };

  const handle = async ({ method, args }: JobWriteRequest): Promise<unknown> => {
    const collectionId = args[0] as string;
    switch (method) {
      case "upsertDocuments":
        return index.upsertDocuments(collectionId, args[1] as DocumentInput[]);
      case "stageChunks": {
        const [, key, header, chunks] = args as [string, string, DocumentHeader, ChunkInput[]];
        return (await stage(collectionId, key, header)).addChunks(chunks);
      }
      case "commitStaged": {
        const [, key, header] = args as [string, string, DocumentHeader];
        const id = await (await stage(collectionId, key, header)).commit();
        // A failed commit stays, to be discarded.
        staged.delete(key);
        return id;
      }
      case "discardStaged": {
        const key = args[1] as string;
        const doc = staged.get(key);
        staged.delete(key);
        if (doc) await (await doc.catch(() => null))?.discard();
        return undefined;
      }
      case "removeUnfinished":
        return index.removeUnfinished(collectionId);
      case "removeDocuments":
        return index.removeDocuments(collectionId, args[1] as string, args[2] as string[]);
      case "settleWrites":
        return index.settleWrites?.();
      default:
        throw new Error(`Unknown index request "${method as string}"`);
    }
  };

  port.on("message", (request: JobWriteRequest) => void answerCall((reply) => port.postMessage(reply), request.id, () => handle(request)));
  port.on("close", () => {
    for (const doc of staged.values()) void doc.then((d) => d.discard()).catch(() => undefined);
    staged.clear();
  });
  // A running job holds the process through its thread; its channel alone must not.
  port.unref();
}
