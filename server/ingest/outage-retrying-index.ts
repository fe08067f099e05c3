import type { DatabaseOutage } from "../data/database-outage";
import type {
  ChunkInput,
  ChunkKey,
  CollectionCountRequest,
  KeyedChunk,
  CollectionStats,
  DocumentHeader,
  DocumentInput,
  DocumentSummary,
  EmptyFile,
  IndexedState,
  PermissionsUpdate,
  ReadableFilter,
  SearchHit,
  SearchIndex,
  StagedDocument,
  StoredAcl,
} from "../search/search-index";

/**
 * The index as the ingestion job sees it: every call rides out a database outage (the team
 * server's index is in PostgreSQL) through the job's DatabaseOutage. Retrying a write is safe:
 * a batch is one transaction, and writing a document again replaces it by (source, path).
 */
export class OutageRetryingIndex implements SearchIndex {
  constructor(
    private readonly index: SearchIndex,
    private readonly outage: DatabaseOutage,
    private readonly signal: AbortSignal,
  ) {}

  private retry<T>(fn: () => Promise<T>): Promise<T> {
    return this.outage.run(fn, this.signal);
  }

  upsertDocument(collectionId: string, doc: DocumentInput): Promise<string> {
    return this.retry(() => this.index.upsertDocument(collectionId, doc));
  }

  upsertDocuments(collectionId: string, docs: DocumentInput[]): Promise<string[]> {
    return this.retry(() => this.index.upsertDocuments(collectionId, docs));
  }

  /** The start of a streamed document; its parts are written by the staged document itself (an outage fails that one file). */
  stageDocument(collectionId: string, doc: DocumentHeader): Promise<StagedDocument> {
    return this.retry(() => this.index.stageDocument(collectionId, doc));
  }

  removeUnfinished(collectionId: string): Promise<void> {
    return this.retry(() => this.index.removeUnfinished(collectionId));
  }

  async settleWrites(collectionId: string): Promise<void> {
    if (this.index.settleWrites) await this.retry(() => this.index.settleWrites!(collectionId));
  }

  removeDocuments(collectionId: string, sourceId: string, paths: string[]): Promise<void> {
    return this.retry(() => this.index.removeDocuments(collectionId, sourceId, paths));
  }

  markEmpty(collectionId: string, sourceId: string, files: EmptyFile[]): Promise<void> {
    return this.retry(() => this.index.markEmpty(collectionId, sourceId, files));
  }

  indexedState(collectionId: string, sourceId: string): Promise<Map<string, IndexedState>> {
    return this.retry(() => this.index.indexedState(collectionId, sourceId));
  }

  documentChunks(collectionId: string, documentId: string): Promise<ChunkInput[]> {
    return this.retry(() => this.index.documentChunks(collectionId, documentId));
  }

  chunksByKey(collectionId: string, chunks: ChunkKey[]): Promise<Array<KeyedChunk | null>> {
    return this.retry(() => this.index.chunksByKey(collectionId, chunks));
  }

  listDocuments(collectionId: string, offset: number, limit: number, filter?: ReadableFilter): Promise<{ total: number; items: DocumentSummary[] }> {
    return this.retry(() => this.index.listDocuments(collectionId, offset, limit, filter));
  }

  updatePermissions(collectionId: string, sourceId: string, updates: PermissionsUpdate[]): Promise<void> {
    return this.retry(() => this.index.updatePermissions(collectionId, sourceId, updates));
  }

  acls(collectionId: string): Promise<{ version: string; acls: StoredAcl[] }> {
    return this.retry(() => this.index.acls(collectionId));
  }

  aclVersion(collectionId: string): Promise<string> {
    return this.retry(() => this.index.aclVersion(collectionId));
  }

  aclVersions(collectionIds: readonly string[]): Promise<string[]> {
    return this.retry(() => this.index.aclVersions(collectionIds));
  }

  statsOfMany(requests: ReadonlyArray<CollectionCountRequest>): Promise<CollectionStats[]> {
    return this.retry(() => this.index.statsOfMany(requests));
  }

  readableDocuments(collectionId: string, documentIds: string[], filter: ReadableFilter): Promise<Set<string>> {
    return this.retry(() => this.index.readableDocuments(collectionId, documentIds, filter));
  }

  search(collectionId: string, query: string, topK: number): Promise<SearchHit[]> {
    return this.retry(() => this.index.search(collectionId, query, topK));
  }

  stats(collectionId: string, filter?: ReadableFilter): Promise<CollectionStats> {
    return this.retry(() => this.index.stats(collectionId, filter));
  }

  moveAside(collectionId: string): Promise<string | null> {
    return this.retry(() => this.index.moveAside(collectionId));
  }

  drop(collectionId: string): Promise<void> {
    return this.retry(() => this.index.drop(collectionId));
  }

  /** The job does not own the index: closing it is the process's business. */
  async close(): Promise<void> {}
}
