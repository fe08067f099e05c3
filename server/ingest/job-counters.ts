import type { JobError, JobSkip, JobStats, SkipReason } from "../data/entities/ingest-job.entity";
import { JobStatsRecorder } from "./job-stats";

const MAX_LISTED_ERRORS = 100;
/** Skipped files named in the job record; the count (entitiesSkipped) covers them all. */
const MAX_LISTED_SKIPS = 100;

/** The fields of a job row that its progress writes. */
export interface ProgressRow {
  entitiesDiscovered: number;
  entitiesProcessed: number;
  entitiesFailed: number;
  entitiesSkipped: number;
  bytesProcessed: number;
  filesAdded: number;
  filesChanged: number;
  filesRemoved: number;
  filesUnchanged: number;
  /** Of the unchanged files, those whose file-server permissions changed (re-read without reading the content). */
  filesPermissionsChanged: number;
  discoveryComplete: boolean;
  currentEntity: string;
  errors: JobError[];
  skipped: JobSkip[];
  stats: JobStats;
}

/**
 * The live counters of one running job, handed on (written to the row, or posted from a job's
 * thread to the one that writes it) at most every `everyMs` and on flush(), so the job does not
 * spend its time on that. Nothing here loads TypeORM: a job's own thread counts with it too.
 */
export abstract class JobCounters {
  entitiesDiscovered = 0;
  entitiesProcessed = 0;
  entitiesFailed = 0;
  entitiesSkipped = 0;
  bytesProcessed = 0;
  filesAdded = 0;
  filesChanged = 0;
  filesRemoved = 0;
  filesUnchanged = 0;
  filesPermissionsChanged = 0;
  discoveryComplete = false;
  currentEntity = "Starting";
  readonly errors: JobError[] = [];
  readonly skips: JobSkip[] = [];
  /** Where the time went, per stage and per file type; written with the counters. */
  readonly stats = new JobStatsRecorder();
  private lastWrite = 0;
  private trailing: NodeJS.Timeout | null = null;
  private pending: Promise<void> = Promise.resolve();

  constructor(private readonly everyMs: number) {}

  /** Hands one row on; called one at a time, in order. `asked`: flush() was called (a moment worth writing now, the end of discovery), not a periodic write. */
  protected abstract persist(row: ProgressRow, asked: boolean): Promise<void>;

  discovered(count = 1): void {
    this.entitiesDiscovered += count;
    this.touch();
  }

  /** A file left out without failing: counted as processed and skipped, and named with why (first MAX_LISTED_SKIPS). */
  skipped(entity: string, reason: SkipReason, bytes = 0): void {
    if (this.skips.length < MAX_LISTED_SKIPS) this.skips.push({ entity, reason });
    this.processed("skipped", bytes);
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

  /** An unchanged file whose permissions changed (it is counted as unchanged too). */
  permissionsChanged(): void {
    this.filesPermissionsChanged += 1;
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
   * Hands on now if the last row is older than everyMs, else once it is: a change followed by a
   * long quiet spell (one big file parsing) must not leave the row showing the file before it.
   */
  touch(): void {
    const due = this.lastWrite + this.everyMs - Date.now();
    // A failed periodic write (a full disk, a database outage) is not the job failing: the next one, or the final flush, writes the same counters; never an unhandled rejection that stops the process.
    if (due <= 0) this.write(false).catch(() => undefined);
    else this.trailing ??= setTimeout(() => this.write(false).catch(() => undefined), due).unref();
  }

  /** Hands the counters on now, after any row still under way, whether that one succeeded or not. */
  flush(): Promise<void> {
    return this.write(true);
  }

  private write(asked: boolean): Promise<void> {
    if (this.trailing) clearTimeout(this.trailing);
    this.trailing = null;
    this.lastWrite = Date.now();
    const row = this.row();
    const write = this.pending.catch(() => undefined).then(() => this.persist(row, asked));
    this.pending = write;
    return write;
  }

  /** The counters as the row keeps them. */
  row(): ProgressRow {
    return {
      entitiesDiscovered: this.entitiesDiscovered,
      entitiesProcessed: this.entitiesProcessed,
      entitiesFailed: this.entitiesFailed,
      entitiesSkipped: this.entitiesSkipped,
      bytesProcessed: this.bytesProcessed,
      filesAdded: this.filesAdded,
      filesChanged: this.filesChanged,
      filesRemoved: this.filesRemoved,
      filesUnchanged: this.filesUnchanged,
      filesPermissionsChanged: this.filesPermissionsChanged,
      discoveryComplete: this.discoveryComplete,
      currentEntity: this.currentEntity.slice(0, 1000),
      errors: [...this.errors],
      skipped: [...this.skips],
      stats: this.statsSnapshot(),
    };
  }

  /** This side's timings, added to those of counters adopted from elsewhere (each side times its own stages). */
  private statsSnapshot(): JobStats {
    const own = this.stats.snapshot();
    if (!this.adopted) return own;
    const timings = { ...this.adopted.timings };
    for (const key of Object.keys(timings) as Array<keyof JobStats["timings"]>) timings[key] = Math.round((timings[key] + own.timings[key]) * 1000) / 1000;
    return { timings, by_type: { ...own.by_type, ...this.adopted.by_type } };
  }

  /**
   * Takes on the counters of the same job counted elsewhere (its own thread): the row then says
   * what they say, this side's own timings added to theirs. `now`: they were flushed there, so
   * they are written now too.
   */
  adopt(row: ProgressRow, now = false): void {
    const { errors, skipped, stats, ...counters } = row;
    Object.assign(this, counters);
    this.errors.splice(0, this.errors.length, ...errors);
    this.skips.splice(0, this.skips.length, ...skipped);
    this.adopted = stats;
    if (now) this.flush().catch(() => undefined);
    else this.touch();
  }

  private adopted: JobStats | null = null;
}
