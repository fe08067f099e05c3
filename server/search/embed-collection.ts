import crypto from "node:crypto";
import type { SearchIndex } from "./search-index";
import { normalise, PREVIEW_CHARS, type ChunkVector, type VectorStore } from "./vector-store";

/** Texts sent to the model server in one /api/embed request. */
export const EMBED_BATCH = 32;
/** Documents listed from the index at a time. */
const LIST_PAGE = 500;

export interface Embedder {
  embed(model: string, inputs: string[], signal?: AbortSignal): Promise<number[][]>;
}

export interface EmbeddingReport {
  /** Chunks sent to the model server. */
  embedded: number;
  /** Chunks of rewritten documents whose text was unchanged: their vectors were reused. */
  reused: number;
  /** Documents whose vectors were dropped (gone from the index). */
  removed: number;
}

/**
 * Brings a collection's vectors in line with its index: documents without vectors (new or
 * rewritten since, as a rewrite gives a document a new id) get them, and vectors of documents
 * no longer indexed go. A chunk whose exact text already has a vector (the unchanged part of a
 * changed file) reuses it, so only new or changed text reaches the model; a run that changed
 * nothing embeds nothing. Idempotent: an interrupted run's successor picks up where it stopped.
 */
export async function embedCollection(
  deps: { index: SearchIndex; vectors: VectorStore; embedder: Embedder },
  collectionId: string,
  model: string,
  onProgress: (text: string) => void,
  signal?: AbortSignal,
): Promise<EmbeddingReport> {
  const { index, vectors, embedder } = deps;
  const have = await vectors.embeddedDocuments(collectionId, model);
  const missing: Array<{ documentId: string; sourceId: string; path: string; title: string }> = [];
  const current = new Set<string>();
  for (let offset = 0; ; offset += LIST_PAGE) {
    const page = await index.listDocuments(collectionId, offset, LIST_PAGE);
    for (const doc of page.items) {
      current.add(doc.documentId);
      // A document cut short by an interrupted run has fewer vectors than chunks: its batches are put again.
      if ((have.get(doc.documentId) ?? 0) !== doc.chunkCount && doc.chunkCount > 0) missing.push({ documentId: doc.documentId, sourceId: doc.sourceId, path: doc.path, title: doc.title });
    }
    if (page.items.length < LIST_PAGE) break;
  }
  // Vectors of the removed and replaced versions stay until the new ones are in, so their text can be reused.
  const gone = [...have.keys()].filter((id) => !current.has(id));
  const report: EmbeddingReport = { embedded: 0, reused: 0, removed: gone.length };
  for (const [n, doc] of missing.entries()) {
    if (signal?.aborted) throw signal.reason ?? new Error("Interrupted");
    const chunks = await index.documentChunks(collectionId, doc.documentId);
    const hashes = chunks.map((c) => crypto.createHash("sha256").update(c.text).digest("hex"));
    const known = await vectors.vectorsByHash(collectionId, [...new Set(hashes)]);
    for (let start = 0; start < chunks.length; start += EMBED_BATCH) {
      onProgress(`Embedding ${doc.path} (${n + 1} of ${missing.length} documents, ${report.embedded} chunks embedded so far)`);
      const batch = chunks.slice(start, start + EMBED_BATCH);
      const toEmbed = batch.filter((_, i) => !known.has(hashes[start + i]));
      const made = await embedder.embed(model, toEmbed.map((c) => c.text), signal);
      let next = 0;
      const rows: ChunkVector[] = batch.map((chunk, i) => {
        const hash = hashes[start + i];
        const vector = known.get(hash) ?? normalise(made[next++]);
        return { documentId: doc.documentId, sourceId: doc.sourceId, chunkIndex: chunk.chunkIndex, path: doc.path, title: doc.title, preview: chunk.text.slice(0, PREVIEW_CHARS), hash, vector };
      });
      report.embedded += toEmbed.length;
      report.reused += batch.length - toEmbed.length;
      await vectors.put(collectionId, model, rows);
    }
  }
  await vectors.removeDocuments(collectionId, gone);
  return report;
}
