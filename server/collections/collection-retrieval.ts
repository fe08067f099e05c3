import path from "node:path";
import type { ReadableFilter, SearchHit, SearchIndex, SearchOptions } from "../search/search-index";
import type { VectorHit, VectorStore } from "../search/vector-store";
import { normalise } from "../search/vector-store";
import { hybridSearch, vectorHitAsSearchHit } from "../search/hybrid";
import type { Embedder } from "../search/embed-collection";
import { capPerDocument, folderPrefix, spreadPerDocument } from "../search/query";
import { OllamaError, OllamaUnreachableError } from "../llm/ollama.client";
import { ServiceUnavailableError } from "../errors";

export type SearchMode = "keyword" | "semantic" | "hybrid";

/** Hits with options.firstPerDocument applied (none with a hard cap), as the full-text engines apply it to their own ranking. */
function spread<T extends { documentId: string }>(hits: T[], options: SearchOptions): T[] {
  return options.perDocument === undefined ? spreadPerDocument(hits, options.firstPerDocument, (hit) => hit.documentId) : hits;
}

/** Nearest chunks read per chunk asked for when a filter or a per-document cap applies (they are filtered after the vector search). */
const FILTERED_OVERFETCH = 5;

/** What a search without `mode` does: hybrid where the collection has an embedding model, else keyword. */
export function defaultMode(embeddingModel: string | null): SearchMode {
  return embeddingModel ? "hybrid" : "keyword";
}

/**
 * Search in one of three modes over a collection's index and vectors. Semantic and hybrid
 * embed the query with the collection's model (the caller refuses them without one).
 */
export class CollectionRetrieval {
  constructor(
    private readonly index: SearchIndex,
    readonly vectors: VectorStore,
    readonly embedder: Embedder,
  ) {}

  /**
   * Every hit comes with its chunk's whole text and its place (page, location label, from a
   * scan), however it was found: a chunk found only by meaning carries the vector store's preview
   * of it and no place, so those are read from the full-text index by (document, chunk), at most
   * topK rows by key (readBack); the vector store keeps no second copy of every chunk.
   */
  async search(collectionId: string, embeddingModel: string | null, query: string, topK: number, options: SearchOptions, mode: SearchMode): Promise<SearchHit[]> {
    if (mode === "keyword" || !embeddingModel) return this.index.search(collectionId, query, topK, options);
    const semantic = async (k: number) => this.semantic(collectionId, await this.embedQuery(embeddingModel, query), k, options);
    const readBack = (hits: SearchHit[]) => this.readBack(collectionId, hits);
    if (mode === "semantic") return readBack((await semantic(topK)).map(vectorHitAsSearchHit));
    const fused = await hybridSearch((k) => this.index.search(collectionId, query, k, options), semantic, topK, readBack);
    return spread(capPerDocument(fused, options.perDocument, (hit) => hit.documentId), options);
  }

  /** What an ask retrieves: the default mode's best chunks for `query` (hybrid with an embedding model, else keyword; the same decision as a search without `mode`). */
  async passages(collectionId: string, embeddingModel: string | null, query: string, topK: number, filter: ReadableFilter = {}): Promise<SearchHit[]> {
    return this.search(collectionId, embeddingModel, query, topK, { ...filter }, defaultMode(embeddingModel));
  }

  /** Hits found by meaning with their chunks' whole text and place from the index; a chunk gone since the vectors were read (a re-run replaced its document) is left out. */
  private async readBack(collectionId: string, hits: SearchHit[]): Promise<SearchHit[]> {
    if (hits.length === 0) return hits;
    const stored = await this.index.chunksByKey(collectionId, hits);
    return hits.flatMap((hit, i) => {
      const chunk = stored[i];
      return chunk ? [{ ...hit, text: chunk.text, page: chunk.page, locationLabel: chunk.locationLabel, scanned: chunk.scanned }] : [];
    });
  }

  /**
   * The vector ranking with the search's filters (type, folder, readable documents, chunks per
   * document) applied to its nearest chunks: the vector stores rank a whole collection and keep
   * no permissions (an ACL change must not rewrite vectors), so a filtered search reads more of
   * them and keeps those that pass, reading further until topK pass or the collection is exhausted
   * (docs/decisions/0320-permissions-in-the-query.md).
   */
  private async semantic(collectionId: string, vector: Float32Array, topK: number, options: SearchOptions): Promise<VectorHit[]> {
    const filtered = Boolean(options.types?.length || options.folder || options.perDocument !== undefined || options.readableAcls !== undefined);
    const types = options.types?.length ? new Set(options.types) : null;
    const prefix = options.folder ? folderPrefix(options.folder) : null;
    let depth = filtered ? topK * FILTERED_OVERFETCH : topK;
    for (;;) {
      const hits = await this.vectors.search(collectionId, vector, depth);
      let kept = hits.filter((hit) => (!types || types.has(path.posix.extname(hit.path).slice(1).toLowerCase())) && (!prefix || hit.path.startsWith(prefix)));
      if (options.readableAcls !== undefined && kept.length > 0) {
        const readable = await this.index.readableDocuments(collectionId, [...new Set(kept.map((hit) => hit.documentId))], options);
        kept = kept.filter((hit) => readable.has(hit.documentId));
      }
      const page = spread(capPerDocument(kept, options.perDocument, (hit) => hit.documentId), options).slice(0, topK);
      // Fewer than asked came back: there are no more to read.
      if (page.length >= topK || hits.length < depth || !filtered) return page;
      depth *= FILTERED_OVERFETCH;
    }
  }

  private async embedQuery(model: string, query: string): Promise<Float32Array> {
    try {
      const [vector] = await this.embedder.embed(model, [query]);
      return normalise(vector);
    } catch (error) {
      if (error instanceof OllamaUnreachableError) throw new ServiceUnavailableError(error.message);
      if (error instanceof OllamaError) throw new ServiceUnavailableError(`The embedding model ${model} could not embed the query: ${error.message}`);
      throw error;
    }
  }
}
