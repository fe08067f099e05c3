import { DatabaseConnectionLost } from "../data/database-outage";
import type { DocumentInput, SearchIndex } from "../search/search-index";
import type { JobCounters } from "./job-counters";
import { isDiskFull } from "../disk/disk-space";
import { IndexDamagedError } from "../search/index-damage";

/** A batch is written at least this often, so search and progress keep up with a slow source. */
const MAX_WAIT_MS = 1000;

/** How a job's documents are grouped into index writes (one transaction each). */
export interface BatchPolicy {
  /** Batches written at once. */
  writesInFlight: number;
  /** A batch is due at this many documents or chunks (or once its first document waited MAX_WAIT_MS). */
  documents: number;
  chunks: number;
  /**
   * While every write slot is busy, documents wait for the next batch up to this many documents
   * or chunks (callers are held back beyond), and a batch takes up to this many.
   */
  maxDocuments: number;
  maxChunks: number;
}

/**
 * PostgreSQL computes tsvectors in one backend per connection, so two batches written at once
 * use two cores; batches never share a file, so their order does not matter.
 */
export const PARALLEL_BATCHES: BatchPolicy = { writesInFlight: 2, documents: 64, chunks: 4000, maxDocuments: 64, maxChunks: 4000 };

/**
 * The batches a job writes to a database: PARALLEL_BATCHES, but one write at a time when the
 * database runs on this machine and it has 2 cores or fewer. Each write keeps a database backend
 * on a core for its whole transaction (tsvectors, GIN entries); two at once took both cores, and
 * the API's answers waited for one: `GET /collections` p99 during an ingestion 84-92 ms with two,
 * 36-54 ms with one, for an ingestion ~25 % longer (the database's CPU is the same; it is spent
 * on one core instead of two). On a larger machine, or with the database on a host of its own,
 * there is a core to spare for the API either way (docs/decisions/0122-postgres-one-index-write-on-small-machines.md).
 */
export function databaseBatches(cores: number, databaseOnThisMachine: boolean): BatchPolicy {
  return databaseOnThisMachine && cores <= 2 ? { ...PARALLEL_BATCHES, writesInFlight: 1 } : PARALLEL_BATCHES;
}

/**
 * The SQLite index has one writer thread, the slowest stage of a job on the bench corpus.
 * Whatever comes in while the writes are busy goes in the next batch (group commit), so the
 * batches grow to the writer's pace: each FTS5 commit writes a segment of nearly every term
 * of the vocabulary, which later merges rewrite, and 256 documents per transaction with an
 * 8 MB term buffer (search/sqlite/sqlite-fts-schema.ts) took the writer's CPU on the bench corpus ~20 % below
 * 64 per transaction (docs/decisions/0184-fts5-hashsize-and-256-batches.md). Two in flight, so the writer
 * thread finds the next batch queued when one ends: with one, each answer and the next batch
 * crossing threads left it idle 6-28 ms per batch on a busy machine. The first batch goes at
 * 16 documents: the writer has nothing else to do while the first files are read and parsed.
 */
export const GROUP_COMMIT: BatchPolicy = { writesInFlight: 2, documents: 16, chunks: 1000, maxDocuments: 256, maxChunks: 16000 };

/** Errors no single document causes (a full disk, a damaged index file, a database gone past DB_OUTAGE_GRACE_S): they end the job rather than fail one file each. */
export function isFatalIndexError(error: unknown): boolean {
  return isDiskFull(error) || error instanceof IndexDamagedError || error instanceof DatabaseConnectionLost;
}

interface Pending {
  doc: DocumentInput;
  bytes: number;
  /** Whether the file is new to the collection or replaces what it held. */
  change: "added" | "changed";
  /** When it was added (Date.now()). */
  at: number;
}

/**
 * Collects parsed documents and writes them to the index in batches (one transaction each),
 * as the policy says: how many at once, when a batch is due, how big one may grow while the
 * writes are busy. A file counts as processed once its batch is written; if a batch fails,
 * its documents are written one by one so only the bad file fails.
 */
export class BatchedIndexWriter {
  private pending: Pending[] = [];
  private chunks = 0;
  private readonly writing = new Set<Promise<void>>();
  /** Callers held back while the pending batch is full. */
  private held: Array<() => void> = [];
  /** The first fatal error of a write nobody awaited yet: the next add() or flush() throws it. */
  private failure: unknown = null;

  constructor(
    private readonly index: Pick<SearchIndex, "upsertDocuments" | "upsertDocument">,
    private readonly collectionId: string,
    private readonly progress: JobCounters,
    private readonly policy: BatchPolicy = PARALLEL_BATCHES,
  ) {}

  /** Resolves once the document is queued, which waits only while every write slot is busy and the next batch is full. */
  async add(doc: DocumentInput, bytes: number, change: "added" | "changed" = "added"): Promise<void> {
    if (this.failure) throw this.failure;
    this.pending.push({ doc, bytes, change, at: Date.now() });
    this.chunks += doc.chunks.length;
    this.startDue(false);
    if (this.full()) await new Promise<void>((resolve) => this.held.push(resolve));
    if (this.failure) throw this.failure;
  }

  /** Writes whatever is pending and waits for every write under way. */
  async flush(): Promise<void> {
    for (;;) {
      this.startDue(true);
      if (this.writing.size === 0) break;
      await Promise.race(this.writing);
    }
    if (this.failure) throw this.failure;
  }

  private due(): boolean {
    const p = this.policy;
    return this.pending.length >= p.documents || this.chunks >= p.chunks || (this.pending.length > 0 && Date.now() - this.pending[0].at >= MAX_WAIT_MS);
  }

  private full(): boolean {
    return this.pending.length >= this.policy.maxDocuments || this.chunks >= this.policy.maxChunks;
  }

  /** Starts writes while a slot is free and a batch is due (any pending one with `all`), then lets held callers go on if there is room. */
  private startDue(all: boolean): void {
    while (!this.failure && this.writing.size < this.policy.writesInFlight && this.pending.length > 0 && (all || this.due())) {
      const write: Promise<void> = this.write(this.take())
        .catch((error: unknown) => {
          this.failure ??= error;
        })
        .finally(() => {
          this.writing.delete(write);
          this.startDue(false);
        });
      this.writing.add(write);
    }
    if (this.full() && !this.failure) return;
    const held = this.held;
    this.held = [];
    for (const resume of held) resume();
  }

  /** The oldest pending documents, up to maxDocuments, or until they hold maxChunks (the one reaching it included). */
  private take(): Pending[] {
    let count = 0;
    let chunks = 0;
    while (count < this.pending.length && count < this.policy.maxDocuments && chunks < this.policy.maxChunks) chunks += this.pending[count++].doc.chunks.length;
    this.chunks -= chunks;
    return this.pending.splice(0, count);
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
