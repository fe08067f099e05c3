/** The planner's estimates behind one ranking's window (see windowSpans, postgres-fts-window.ts). */
export interface SpanEstimate {
  exactMatches: number;
  stemmedMatches: number;
  /** The collection's chunks. */
  chunks: number;
  /** Whether a prefix attempt's other units are looked up in the index instead of its prefix (see TsquerySplit, postgres-tsquery.ts). */
  drive: boolean;
}

/**
 * The planner's estimates kept for a while, so a search does not pay an EXPLAIN (a round trip
 * and a planning, 0.2 to 1.3 ms) before every ranking: by the EXPLAIN's text and parameters,
 * the most recently used `capacity` of them, each for `ttlMs`; and per collection its chunk
 * count, so a collection too small for any span (fewer than `minChunks`) asks no EXPLAIN at
 * all. Estimates change only when the statistics do (an ANALYZE) or the table grows; they only
 * choose how the window is read, never which rows are in it, so one a little stale costs at
 * most some speed.
 */
export class SpanEstimates {
  private readonly estimates = new Map<string, { estimate: SpanEstimate; at: number }>();
  private readonly collections = new Map<string, { chunks: number; at: number }>();

  constructor(
    private readonly minChunks: number,
    private readonly ttlMs = 30_000,
    private readonly capacity = 1_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether the collection was last seen with too few chunks for a span (and that is recent). */
  tooSmall(collection: string): boolean {
    const known = this.collections.get(collection);
    return known !== undefined && this.now() - known.at < this.ttlMs && known.chunks < this.minChunks;
  }

  get(key: string): SpanEstimate | undefined {
    const entry = this.estimates.get(key);
    if (!entry) return undefined;
    this.estimates.delete(key);
    if (this.now() - entry.at >= this.ttlMs) return undefined;
    this.estimates.set(key, entry); // most recently used last
    return entry.estimate;
  }

  set(collection: string, key: string, estimate: SpanEstimate): void {
    const at = this.now();
    this.collections.delete(collection);
    this.collections.set(collection, { chunks: estimate.chunks, at });
    this.estimates.delete(key);
    this.estimates.set(key, { estimate, at });
    for (const map of [this.estimates, this.collections] as Map<string, unknown>[]) {
      while (map.size > this.capacity) map.delete(map.keys().next().value!);
    }
  }
}
