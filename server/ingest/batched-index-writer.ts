import type { DocumentInput, SearchIndex } from "../search/search-index";
import type { JobProgress } from "./job-progress";

const MAX_DOCUMENTS = 64;
const MAX_CHUNKS = 4000;
/** A batch is written at least this often, so search and progress keep up with a slow source. */
const MAX_WAIT_MS = 1000;

interface Pending {
  doc: DocumentInput;
  bytes: number;
}

/**
 * Collects parsed documents and writes them to the index in batches (one transaction
 * each). A file counts as processed once its batch is written; if a batch fails, its
 * documents are written one by one so only the bad file fails.
 */
export class BatchedIndexWriter {
  private pending: Pending[] = [];
  private chunks = 0;
  private oldest = 0;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly index: SearchIndex,
    private readonly collectionId: string,
    private readonly progress: JobProgress,
  ) {}

  add(doc: DocumentInput, bytes: number): Promise<void> {
    if (this.pending.length === 0) this.oldest = Date.now();
    this.pending.push({ doc, bytes });
    this.chunks += doc.chunks.length;
    const due = this.pending.length >= MAX_DOCUMENTS || this.chunks >= MAX_CHUNKS || Date.now() - this.oldest >= MAX_WAIT_MS;
    return due ? this.flush() : Promise.resolve();
  }

  /** Writes whatever is pending; writes are serialized. */
  flush(): Promise<void> {
    const batch = this.pending;
    this.pending = [];
    this.chunks = 0;
    this.writing = this.writing.then(() => this.write(batch));
    return this.writing;
  }

  private async write(batch: Pending[]): Promise<void> {
    if (batch.length === 0) return;
    try {
      await this.index.upsertDocuments(this.collectionId, batch.map((p) => p.doc));
      for (const p of batch) this.progress.processed("indexed", p.bytes);
    } catch {
      for (const p of batch) {
        try {
          await this.index.upsertDocument(this.collectionId, p.doc);
          this.progress.processed("indexed", p.bytes);
        } catch (error) {
          this.progress.failed(p.doc.path, `Could not be added to the index: ${(error as Error).message}`, p.bytes);
        }
      }
    }
  }
}
