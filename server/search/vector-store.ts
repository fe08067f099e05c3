/**
 * Chunk embeddings of a collection, kept next to its full-text index but in their own
 * table(s), so the full-text engines stay as they are. Rows are keyed by the index's
 * (documentId, chunkIndex): a document rewritten by ingestion gets a new id, so "which
 * documents have no vectors yet" is what the embedding stage embeds. Each row keeps its text's
 * hash, so a changed document's unchanged chunks reuse their vectors instead of being embedded again.
 */

export interface ChunkVector {
  documentId: string;
  sourceId: string;
  chunkIndex: number;
  path: string;
  title: string;
  /** The start of the chunk's text, shown as a semantic hit's snippet. */
  preview: string;
  /** sha256 of the chunk's full text. */
  hash: string;
  /** Unit length (normalise before put): cosine similarity is then a dot product. */
  vector: Float32Array;
}

export interface VectorHit {
  documentId: string;
  sourceId: string;
  chunkIndex: number;
  path: string;
  title: string;
  preview: string;
  /** Cosine similarity, higher is better. */
  similarity: number;
}

export interface VectorStore {
  /** Which engine answers, for the start-up log ("sqlite-vec", "pgvector", "exact similarity in SQL"). */
  readonly engine: string;
  /** How many chunks of each document have vectors made by `model`; vectors of any other model are dropped first. */
  embeddedDocuments(collectionId: string, model: string): Promise<Map<string, number>>;
  /** Stored vectors by text hash, to reuse for identical text. */
  vectorsByHash(collectionId: string, hashes: string[]): Promise<Map<string, Float32Array>>;
  put(collectionId: string, model: string, rows: ChunkVector[]): Promise<void>;
  removeDocuments(collectionId: string, documentIds: string[]): Promise<void>;
  /** The topK chunks nearest to `vector` (unit length), nearest first. */
  search(collectionId: string, vector: Float32Array, topK: number): Promise<VectorHit[]>;
  drop(collectionId: string): Promise<void>;
  close(): Promise<void>;
}

/** Scales a vector to unit length (a zero vector stays zero). */
export function normalise(values: number[]): Float32Array {
  const norm = Math.hypot(...values);
  return Float32Array.from(values, (v) => (norm > 0 ? v / norm : 0));
}

export const PREVIEW_CHARS = 300;
