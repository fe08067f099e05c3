import { DatabaseConnectionLost } from "../data/database-outage";
import type { DocumentInput, SearchIndex } from "../search/search-index";
import type { JobCounters } from "./job-counters";
import { isDiskFull } from "../disk/disk-space";
import { IndexDamagedError } from "../search/index-damage";

const MAX_DOCUMENTS = 64;
const MAX_CHUNKS = 4000;
/** A batch is written at least this often, so search and progress keep up with a slow source. */
const MAX_WAIT_MS = 1000;
/**
 * Batches written at once. The SQLite writer thread takes them one after the other (the next
 * is ready when one ends); PostgreSQL computes tsvectors in one backend per connection, so two
 * at once use two cores. Batches never share a file, so their order does not matter.
 */
const MAX_WRITES_IN_FLIGHT = 2;

/** Errors no single document causes (a full disk, a damaged index file, a database gone past DB_OUTAGE_GRACE_S): they end the job rather than fail one file each. */
export function isFatalIndexError(error: unknown): boolean {
  return isDiskFull(error) || error instanceof IndexDamagedError || error instanceof DatabaseConnectionLost;
}

interface Pending {
  doc: DocumentInput;
  bytes: number;
  /** Whether the file is new to the collection or replaces what it held. */
  change: "added" | "changed";
}

/**
 * Collects parsed documents and writes them to the index in batches (one transaction
 * each), up to MAX_WRITES_IN_FLIGHT at once. A file counts as processed once its batch is
 * written; if a batch fails, its documents are written one by one so only the bad file fails.
 */
export class BatchedIndexWriter {
  private pending: Pending[] = [];
  private chunks = 0;
  private oldest = 0;
  private readonly writing = new Set<Promise<void>>();
  /** The first fatal error of a write nobody awaited yet: the next add() or flush() throws it. */
  private failure: unknown = null;

  constructor(
    private readonly index: Pick<SearchIndex, "upsertDocuments" | "upsertDocument">,
    private readonly collectionId: string,
    private readonly progress: JobCounters,
  ) {}

  add(doc: DocumentInput, bytes: number, change: "added" | "changed" = "added"): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.pending.length === 0) this.oldest = Date.now();
    this.pending.push({ doc, bytes, change });
    this.chunks += doc.chunks.length;
    const due = this.pending.length >= MAX_DOCUMENTS || this.chunks >= MAX_CHUNKS || Date.now() - this.oldest >= MAX_WAIT_MS;
    return due ? this.startWrite() : Promise.resolve();
  }

  /** Writes whatever is pending and waits for every write under way. */
  async flush(): Promise<void> {
    if (this.pending.length > 0) await this.startWrite();
    await Promise.all(this.writing);
    if (this.failure) throw this.failure;
  }

  /**
   * Starts writing the pending batch once fewer than MAX_WRITES_IN_FLIGHT writes are under
   * way; the caller waits only for that, which holds the readers back when the index lags.
   */
  private async startWrite(): Promise<void> {
    const batch = this.pending;
    this.pending = [];
    this.chunks = 0;
    while (this.writing.size >= MAX_WRITES_IN_FLIGHT) await Promise.race(this.writing);
    if (this.failure) throw this.failure;
    const write: Promise<void> = this.write(batch)
      .catch((error: unknown) => {
        this.failure ??= error;
      })
      .finally(() => this.writing.delete(write));
    this.writing.add(write);
  }

  private async write(batch: Pending[]): Promise<void> {
    if (batch.length === 0) return;
    try {
      await this.progress.stats.time("index", () => this.index.upsertDocuments(this.collectionId, batch.map((p) => p.doc)));
      for (const p of batch) this.progress.processed(p.change, p.bytes);
    } catch (error) {
      if (isFatalIndexError(error)) throw error;
      for (const p of batch) {
        try {
          await this.progress.stats.time("index", () => this.index.upsertDocument(this.collectionId, p.doc));
          this.progress.processed(p.change, p.bytes);
        } catch (error) {
          if (isFatalIndexError(error)) throw error;
          this.progress.failed(p.doc.path, `Could not be added to the index: ${(error as Error).message}`, p.bytes);
        }
      }
    }
  }
}
