import type { DataSource } from "typeorm";

/**
 * Keeps the planner's statistics of the search tables in step with what this process writes.
 *
 * Ranked search depends on the planner's estimate of how many chunks a word matches (walk the
 * collection newest first for a common word, the GIN index for a rare one). A freshly ingested
 * collection has no statistics until autovacuum gets round to it (a minute or more after the
 * writes, and then only past 10 % of the table changed): meanwhile every estimate is a default,
 * and a word in 96 % of 26,000 chunks was read by bitmap, all of its matches, in 65 ms instead
 * of 5.6 ms (docs/decisions.md). So after every `floor` rows, and then each time as many rows
 * as the table had at its last ANALYZE have been written (doubling steps: a few ANALYZEs for an
 * ingestion from empty, each a sample of at most 30,000 rows), this process runs ANALYZE in the
 * background, one at a time. Writes and searches do not wait for it (it takes no lock they
 * need); a failure is logged and the next step tries again.
 */
export class SearchStatistics {
  private written = 0;
  /** Rows to write before the next ANALYZE; null until the table's size is known. */
  private due: number | null = null;
  private running: Promise<void> | null = null;

  constructor(
    private readonly db: DataSource,
    private readonly floor: number,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** The table's size at its last ANALYZE (reltuples; negative when never analyzed) sets the first step. */
  async start(): Promise<void> {
    const [row] = (await this.db.query("SELECT reltuples FROM pg_class WHERE oid = 'search_chunks'::regclass")) as { reltuples: number }[];
    this.due = Math.max(this.floor, Number(row?.reltuples ?? 0));
  }

  /** Rows this process wrote (inserted or deleted chunks): ANALYZE once enough have been. */
  noteWritten(rows: number): void {
    this.written += rows;
    if (this.due === null || this.running || this.written < this.due) return;
    this.written = 0;
    this.running = this.analyze().finally(() => {
      this.running = null;
    });
  }

  /** Resolves when no ANALYZE of ours is under way (tests, shutdown). */
  async settled(): Promise<void> {
    await this.running;
  }

  private async analyze(): Promise<void> {
    try {
      await this.db.query("ANALYZE search_chunks, search_documents");
      const [row] = (await this.db.query("SELECT reltuples FROM pg_class WHERE oid = 'search_chunks'::regclass")) as { reltuples: number }[];
      this.due = Math.max(this.floor, Number(row?.reltuples ?? 0));
    } catch (error) {
      this.onError(error);
    }
  }
}
