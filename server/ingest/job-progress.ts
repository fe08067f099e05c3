import type { DataSource } from "typeorm";
import type { DatabaseOutage } from "../data/database-outage";
import { IngestJob, type JobError } from "../data/entities/ingest-job.entity";
import { JobStatsRecorder } from "./job-stats";
import { independentWrite } from "../data/serial-transactions";

const MAX_LISTED_ERRORS = 100;
/** Progress is written at least this often while a job moves (the issue asks for every second). */
const PERSIST_EVERY_MS = 500;

/**
 * The live counters of one running job. Handlers change the fields; the row is written
 * at most every PERSIST_EVERY_MS and on flush(), so the UI sees progress without the job
 * spending its time on database writes.
 */
export class JobProgress {
  entitiesDiscovered = 0;
  entitiesProcessed = 0;
  entitiesFailed = 0;
  entitiesSkipped = 0;
  bytesProcessed = 0;
  filesAdded = 0;
  filesChanged = 0;
  filesRemoved = 0;
  filesUnchanged = 0;
  discoveryComplete = false;
  currentEntity = "Starting";
  readonly errors: JobError[] = [];
  /** Where the time went, per stage and per file type; written with the counters. */
  readonly stats = new JobStatsRecorder();
  private lastWrite = 0;
  private trailing: NodeJS.Timeout | null = null;
  private pending: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: DataSource,
    readonly jobId: string,
    /** The job's writes ride out a database outage through it; exposed for the handler's own reads and writes. */
    readonly outage: DatabaseOutage,
  ) {}

  discovered(count = 1): void {
    this.entitiesDiscovered += count;
    this.touch();
  }

  /** added/changed: indexed, new to the collection or replacing what it held; failed and skipped files are not changes. */
  processed(outcome: "added" | "changed" | "unchanged" | "skipped", bytes = 0): void {
    this.entitiesProcessed += 1;
    if (outcome === "skipped") this.entitiesSkipped += 1;
    else if (outcome === "added") this.filesAdded += 1;
    else if (outcome === "changed") this.filesChanged += 1;
    else this.filesUnchanged += 1;
    this.bytesProcessed += bytes;
    this.touch();
  }

  /** Bytes of a file still being processed (a big file streamed into the index). */
  advance(bytes: number): void {
    this.bytesProcessed += bytes;
    this.touch();
  }

  /** bytes: what was read before the file failed (it still crossed the network). */
  failed(entity: string, message: string, bytes = 0): void {
    this.entitiesProcessed += 1;
    this.entitiesFailed += 1;
    this.bytesProcessed += bytes;
    this.noteError(entity, message);
    this.touch();
  }

  /** An error worth listing that is not a failed file (a folder that could not be listed). */
  noteError(entity: string, message: string): void {
    if (this.errors.length < MAX_LISTED_ERRORS) this.errors.push({ entity, message });
  }

  /** Documents of files no longer in the source, taken out of the collection. */
  removed(count: number): void {
    this.filesRemoved += count;
    this.touch();
  }

  at(currentEntity: string): void {
    this.currentEntity = currentEntity;
    this.touch();
  }

  /**
   * Writes now if the last write is older than PERSIST_EVERY_MS, else once it is: a change
   * followed by a long quiet spell (one big file parsing) must not leave the row showing the
   * file before it.
   */
  touch(): void {
    const due = this.lastWrite + PERSIST_EVERY_MS - Date.now();
    // A failed periodic write (a full disk, a database outage) is not the job failing: the next one, or the final flush, writes the same counters; never an unhandled rejection that stops the process.
    if (due <= 0) this.flush().catch(() => undefined);
    else this.trailing ??= setTimeout(() => this.flush().catch(() => undefined), due).unref();
  }

  /** Writes the counters now (serialized with any write in flight, retried through a short database outage). */
  flush(extra: Partial<IngestJob> = {}): Promise<void> {
    if (this.trailing) clearTimeout(this.trailing);
    this.trailing = null;
    this.lastWrite = Date.now();
    const row: Partial<IngestJob> = {
      entitiesDiscovered: this.entitiesDiscovered,
      entitiesProcessed: this.entitiesProcessed,
      entitiesFailed: this.entitiesFailed,
      entitiesSkipped: this.entitiesSkipped,
      bytesProcessed: this.bytesProcessed,
      filesAdded: this.filesAdded,
      filesChanged: this.filesChanged,
      filesRemoved: this.filesRemoved,
      filesUnchanged: this.filesUnchanged,
      discoveryComplete: this.discoveryComplete,
      currentEntity: this.currentEntity.slice(0, 1000),
      errors: [...this.errors],
      stats: this.stats.snapshot(),
      ...extra,
    };
    // Each write runs after the one before it, whether that one succeeded or not. The job
    // row's writes are the run's own commits (the index's are timed with its batches). They
    // skip PostgreSQL's writer lock: no check-then-write depends on progress (serial-transactions.ts).
    const write = this.pending
      .catch(() => undefined)
      .then(() => this.stats.time("commit", () => this.outage.run(() => independentWrite(this.db, (tx) => tx.update(IngestJob, { id: this.jobId }, row)))))
      .then(() => undefined);
    this.pending = write;
    return write;
  }
}
