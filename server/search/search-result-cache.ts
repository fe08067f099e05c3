import type { SearchHit } from "./search-index";

interface Entry {
  collectionId: string;
  /** The collection file's version (SqliteFtsIndex.dataVersion) read before the search ran. */
  version: string;
  hits: readonly SearchHit[];
  bytes: number;
}

/** Per hit beyond its strings: the object, its numbers and the map entry (an estimate; only the budget's order of size matters). */
const HIT_OVERHEAD_BYTES = 200;

/**
 * Recent search results of the desktop index, least recently used out first, within a byte
 * budget (SEARCH_CACHE_MB). An entry answers only while the collection file's version is the one
 * read before its search ran: any commit to the file (an ingestion's batch, a deletion) by any
 * connection, thread or process changes it, and so does replacing or truncating the file, so a
 * cached answer is the answer the index would give now (docs/decisions/0094-search-result-cache.md). Hits are frozen: callers
 * share them.
 */
export class SearchResultCache {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;

  constructor(private readonly budgetBytes: number) {}

  static key(collectionId: string, query: string, topK: number, options: unknown): string {
    return JSON.stringify([collectionId, query, topK, options ?? null]);
  }

  get(key: string, version: string): readonly SearchHit[] | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    if (entry.version !== version) {
      this.bytes -= entry.bytes;
      return undefined;
    }
    this.entries.set(key, entry); // most recently used last
    return entry.hits;
  }

  set(key: string, collectionId: string, version: string, hits: SearchHit[]): readonly SearchHit[] {
    const frozen = Object.freeze(hits.map((hit) => Object.freeze(hit)));
    const bytes = key.length * 2 + hits.reduce((sum, h) => sum + 2 * (h.text.length + h.snippet.length + h.path.length + h.title.length) + HIT_OVERHEAD_BYTES, 0);
    if (bytes > this.budgetBytes) return frozen;
    const old = this.entries.get(key);
    if (old) {
      this.entries.delete(key);
      this.bytes -= old.bytes;
    }
    this.entries.set(key, { collectionId, version, hits: frozen, bytes });
    this.bytes += bytes;
    for (const [oldest, entry] of this.entries) {
      if (this.bytes <= this.budgetBytes) break;
      this.entries.delete(oldest);
      this.bytes -= entry.bytes;
    }
    return frozen;
  }

  /** A collection's file is about to be deleted, moved aside or found damaged: a new file starts its versions afresh. */
  forget(collectionId: string): void {
    for (const [key, entry] of this.entries) {
      if (entry.collectionId !== collectionId) continue;
      this.entries.delete(key);
      this.bytes -= entry.bytes;
    }
  }

  get size(): number {
    return this.entries.size;
  }
}
