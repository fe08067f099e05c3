import type { DataSource } from "typeorm";
import type { DatabaseOutage } from "../data/database-outage";
import { IngestJob } from "../data/entities/ingest-job.entity";
import { independentWrite } from "../data/serial-transactions";
import { JobCounters, type ProgressRow } from "./job-counters";

/** Progress is written at least this often while a job moves (the issue asks for every second). */
const PERSIST_EVERY_MS = 500;

/**
 * The live counters of one running job, written to its row at most every PERSIST_EVERY_MS and
 * on flush(), so the UI sees progress without the job spending its time on database writes.
 */
export class JobProgress extends JobCounters {
  constructor(
    private readonly db: DataSource,
    readonly jobId: string,
    /** The job's writes ride out a database outage through it; exposed for the handler's own reads and writes. */
    readonly outage: DatabaseOutage,
  ) {
    super(PERSIST_EVERY_MS);
  }

  /**
   * The job row's writes are the run's own commits (the index's are timed with its batches).
   * They skip PostgreSQL's writer lock: no check-then-write depends on progress (serial-transactions.ts).
   */
  protected async persist(row: ProgressRow): Promise<void> {
    await this.stats.time("commit", () => this.outage.run(() => independentWrite(this.db, (tx) => tx.update(IngestJob, { id: this.jobId }, row))));
  }
}
