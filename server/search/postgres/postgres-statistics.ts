import type { DataSource } from "typeorm";

/** When the writes pause this long, a due ANALYZE runs (an ingestion's batches come closer together than this). */
const QUIET_MS = 1_000;
/** Writes that go on without a pause still get an ANALYZE once this many times what was due has been written. */
const UNPAUSED_FACTOR = 4;

export interface SearchStatisticsOptions {
  /** Rows to write before the first ANALYZE of a table never analyzed. */
  floor: number;
  quietMs?: number;
  onError: (error: unknown) => void;
}

/**
 * Keeps the planner's statistics of the search tables in step with what this process writes.
 *
 * Ranked search depends on the planner's estimate of how many chunks a word matches (walk the
 * collection newest first for a common word, the GIN index for a rare one). A freshly ingested
 * collection has no statistics until autovacuum gets round to it (a minute or more after the
 * writes): meanwhile every estimate is a default, and a word in 96 % of 26,000 chunks was read
 * by bitmap, all of its matches, in 65 ms instead of 5.6 ms (docs/decisions/0106-postgres-background-analyze.md).
 *
 * An ANALYZE is due once this process has written `floor` rows, then each time as many rows as
 * the table had at its last ANALYZE (doubling steps). It runs when the writes pause for
 * QUIET_MS (the end of an ingestion: it costs ~1 s of the database's CPU at 26,000 chunks, so
 * not in the middle of one), or at once when UNPAUSED_FACTOR times what was due has been
 * written without a pause. One at a time, in the background: writes and searches never wait
 * for it (it takes no lock they need); a failure is logged and the next step tries again.
 */
export class SearchStatistics {
  private written = 0;
  /** Rows to write before the next ANALYZE; null until the table's size is known. */
  private due: number | null = null;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private readonly quietMs: number;

  constructor(
    private readonly db: DataSource,
    private readonly options: SearchStatisticsOptions,
  ) {
    this.quietMs = options.quietMs ?? QUIET_MS;
  }

  /** The table's size at its last ANALYZE (reltuples; negative when never analyzed) sets the first step. */
  async start(): Promise<void> {
    this.due = Math.max(this.options.floor, await this.analyzedRows());
  }

  /** Rows this process wrote (inserted or deleted chunks). */
  noteWritten(rows: number): void {
    this.written += rows;
    if (this.due === null || this.written < this.due) return;
    if (this.written >= UNPAUSED_FACTOR * this.due) {
      this.runNow();
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.runNow(), this.quietMs);
    this.timer.unref();
  }

  /** Runs a due ANALYZE now rather than at the pause, and resolves when none is under way (tests). */
  async settled(): Promise<void> {
    while (this.timer || this.running) {
      if (this.timer) this.runNow();
      await this.running;
    }
  }

  /** Drops a due ANALYZE and waits for one under way (the pool closes after this). */
  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.due = null;
    await this.running;
  }

  private runNow(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.running) return; // re-checked when it ends
    this.written = 0;
    this.running = this.analyze().finally(() => {
      this.running = null;
      if (this.due !== null && this.written >= this.due) this.noteWritten(0);
    });
  }

  private async analyze(): Promise<void> {
    try {
      await this.db.query("ANALYZE search_chunks, search_documents");
      if (this.due !== null) this.due = Math.max(this.options.floor, await this.analyzedRows());
    } catch (error) {
      this.options.onError(error);
    }
  }

  private async analyzedRows(): Promise<number> {
    const [row] = (await this.db.query("SELECT reltuples FROM pg_class WHERE oid = 'search_chunks'::regclass")) as { reltuples: number }[];
    return Number(row?.reltuples ?? 0);
  }
}
