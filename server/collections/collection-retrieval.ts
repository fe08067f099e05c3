import type { SearchHit, SearchIndex } from "../search/search-index";
import type { VectorStore } from "../search/vector-store";
import { normalise } from "../search/vector-store";
import { hybridSearch, vectorHitAsSearchHit } from "../search/hybrid";
import type { Embedder } from "../search/embed-collection";
import { OllamaError, OllamaUnreachableError } from "../llm/ollama.client";
import { ServiceUnavailableError } from "../errors";

export type SearchMode = "keyword" | "semantic" | "hybrid";

/** What a search without `mode` does: hybrid where the collection has an embedding model, else keyword. */
export function defaultMode(embeddingModel: string | null): SearchMode {
  return embeddingModel ? "hybrid" : "keyword";
}

/**
 * Search in one of three modes over a collection's index and vectors. Semantic and hybrid
 * embed the query with the collection's model; without one they answer like keyword (nothing
 * to compare the query with), so a mode never fails for a collection that has none.
 */
export class CollectionRetrieval {
  constructor(
    private readonly index: SearchIndex,
    readonly vectors: VectorStore,
    readonly embedder: Embedder,
  ) {}

  async search(collectionId: string, embeddingModel: string | null, query: string, topK: number, mode: SearchMode): Promise<SearchHit[]> {
    if (mode === "keyword" || !embeddingModel) return this.index.search(collectionId, query, topK);
    const semantic = async (k: number) => this.vectors.search(collectionId, await this.embedQuery(embeddingModel, query), k);
    if (mode === "semantic") return (await semantic(topK)).map(vectorHitAsSearchHit);
    return hybridSearch((k) => this.index.search(collectionId, query, k), semantic, topK);
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
