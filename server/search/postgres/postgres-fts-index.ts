import DataLoader from "dataloader";
import type { DataSource } from "typeorm";
import { clampTopK, matchAttempts, parseQuery } from "../query";
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
  SearchOptions,
  StagedDocument,
  StoredAcl,
} from "../search-index";
import { rankedChunks } from "./postgres-fts-ranking";
import { countDocuments, countReadable, countReadableMany, listPage, readChunksByKey, readDocumentChunks, readIndexedState } from "./postgres-fts-reads";
import { aclVersion, aclVersions, readableDocumentIds, readAcls, writePermissions } from "./postgres-fts-acls";
import { CONFIG, migrateSchema } from "./postgres-fts-schema";
import { markedSnippet } from "./postgres-fts-snippets";
import { RANK_WINDOW, SPAN_MIN_CHUNKS } from "./postgres-fts-window";
import { dropCollection, openStagedDocument, removeByPaths, settleGinIndexes, upsertBatch, writeEmptyMarks } from "./postgres-fts-writes";
import { SearchStatistics } from "./postgres-statistics";
import { exactMatchOf, toTsquery } from "./postgres-tsquery";
import { inTransaction } from "./postgres-transaction";
import { SpanEstimates } from "./span-estimates";
import { AclVersionMovedError } from "../acl-version-moved";

/**
 * The collection index on PostgreSQL full-text search, in the team server's own database (its
 * tables and upgrades: postgres-fts-schema.ts). A search tries the attempts of query.ts in turn;
 * each is one ranking statement (postgres-fts-ranking.ts) over the exact and the stemmed tier.
 * Collection ids come from the database after the access checks, and are used as they are.
 */

/** Below this many chunks written, a table without statistics costs searches little (see SearchStatistics). */
const ANALYZE_FLOOR = RANK_WINDOW;

export interface PostgresFtsIndexOptions {
  /** Where a failed background ANALYZE is reported. */
  logger?: { warn(message: string): void };
  /** Chunks written before the first ANALYZE of a table never analyzed (tests lower it). */
  analyzeFloor?: number;
  /** How long the writes must pause before a due ANALYZE runs (tests change it). */
  analyzeQuietMs?: number;
}

export class PostgresFtsIndex implements SearchIndex {
  /** Each ranking statement reads the collection's ACL version and checks the filter's (docs/decisions/0503-acl-version-read-in-the-ranking.md). */
  readonly checksAclVersion = true;
  private schema: Promise<void> | null = null;
  private readonly statistics: SearchStatistics;
  private readonly spanEstimates = new SpanEstimates(SPAN_MIN_CHUNKS);
  /**
   * Whether chunks this process inserted may wait in the GIN pending lists: a job's end folds
   * them only then, so a no-change re-run pays no fold (decision 0542). True at start: what an
   * earlier process left is not known.
   */
  private unfolded = true;
  /**
   * Counts asked in the same turn of the event loop (a listing's, Promise.all over its
   * collections) load together in one statement instead of one pooled round trip each; no cache,
   * since counts change as jobs write.
   */
  private readonly statsLoader = new DataLoader<string, CollectionStats>(
    async (keys) => {
      const stats = await countDocuments(this.db, [...new Set(keys)]);
      return keys.map((key) => stats.get(key)!);
    },
    { cache: false },
  );

  constructor(
    private readonly db: DataSource,
    options: PostgresFtsIndexOptions = {},
  ) {
    this.statistics = new SearchStatistics(db, {
      floor: options.analyzeFloor ?? ANALYZE_FLOOR,
      quietMs: options.analyzeQuietMs,
      onError: (error) => options.logger?.warn(`refreshing the search tables' statistics failed (searches may be slower until it works): ${(error as Error).message}`),
    });
  }

  /** Runs a due ANALYZE at once, and resolves when none is under way. */
  statisticsSettled(): Promise<void> {
    return this.statistics.settled();
  }

  async upsertDocument(collectionId: string, doc: DocumentInput): Promise<string> {
    return (await this.upsertDocuments(collectionId, [doc]))[0];
  }

  /** One transaction for the batch; a document's old version goes only when its new one is in (the transaction makes it all or none). */
  async upsertDocuments(collectionId: string, docs: DocumentInput[]): Promise<string[]> {
    if (docs.length === 0) return [];
    await this.ready();
    const ids = await upsertBatch(this.db, collectionId, docs);
    this.unfolded = true;
    this.statistics.noteWritten(docs.reduce((sum, d) => sum + d.chunks.length, 0));
    return ids;
  }

  /**
   * One transaction from start to commit, on a connection of its own: the old version goes and
   * the new one comes in at once for every other reader, and a process that dies mid-way
   * leaves nothing (PostgreSQL rolls the transaction back).
   */
  async stageDocument(collectionId: string, doc: DocumentHeader): Promise<StagedDocument> {
    await this.ready();
    return openStagedDocument(this.db, collectionId, doc, (chunkCount) => {
      this.unfolded = true;
      this.statistics.noteWritten(chunkCount);
    });
  }

  /** Nothing to do: a staged document is one transaction, rolled back if its process dies. */
  async removeUnfinished(): Promise<void> {}

  /**
   * Folds both GIN indexes' pending lists into their trees (settleGinIndexes), so searches no
   * longer scan them entry by entry; nothing when this process inserted no chunk since its last
   * fold (removals, permissions and marks add no GIN entries). Writes during a fold mark the
   * lists again for the next job's end.
   */
  async settleWrites(): Promise<void> {
    if (!this.unfolded) return;
    await this.ready();
    this.unfolded = false;
    try {
      await settleGinIndexes(this.db);
    } catch (error) {
      this.unfolded = true;
      throw error;
    }
  }

  async removeDocuments(collectionId: string, sourceId: string, paths: string[]): Promise<void> {
    if (paths.length === 0) return;
    await this.ready();
    await removeByPaths(this.db, collectionId, sourceId, paths);
    this.statistics.noteWritten(paths.length);
  }

  async markEmpty(collectionId: string, sourceId: string, files: EmptyFile[]): Promise<void> {
    if (files.length === 0) return;
    await this.ready();
    await writeEmptyMarks(this.db, collectionId, sourceId, files);
  }

  async indexedState(collectionId: string, sourceId: string): Promise<Map<string, IndexedState>> {
    await this.ready();
    return readIndexedState(this.db, collectionId, sourceId);
  }

  async listDocuments(collectionId: string, offset: number, limit: number, filter?: ReadableFilter): Promise<{ total: number; items: DocumentSummary[] }> {
    await this.ready();
    return listPage(this.db, collectionId, offset, limit, filter);
  }

  /** Counts; a caller's readable counts are one statement of their own (the loader's are everyone's). */
  async stats(collectionId: string, filter?: ReadableFilter): Promise<CollectionStats> {
    await this.ready();
    if (filter?.readableAcls !== undefined) return countReadable(this.db, collectionId, filter);
    return this.statsLoader.load(collectionId);
  }

  async statsOfMany(requests: ReadonlyArray<CollectionCountRequest>): Promise<CollectionStats[]> {
    await this.ready();
    return countReadableMany(this.db, requests);
  }

  async updatePermissions(collectionId: string, sourceId: string, updates: PermissionsUpdate[]): Promise<void> {
    if (updates.length === 0) return;
    await this.ready();
    await writePermissions(this.db, collectionId, sourceId, updates);
  }

  async acls(collectionId: string): Promise<{ version: string; acls: StoredAcl[] }> {
    await this.ready();
    return readAcls(this.db, collectionId);
  }

  async aclVersion(collectionId: string): Promise<string> {
    await this.ready();
    return aclVersion(this.db, collectionId);
  }

  async aclVersions(collectionIds: readonly string[]): Promise<string[]> {
    if (collectionIds.length === 0) return [];
    await this.ready();
    return aclVersions(this.db, collectionIds);
  }

  async readableDocuments(collectionId: string, documentIds: string[], filter: ReadableFilter): Promise<Set<string>> {
    if (documentIds.length === 0) return new Set();
    await this.ready();
    return readableDocumentIds(this.db, collectionId, documentIds, filter);
  }

  async search(collectionId: string, query: string, topK: number, filter: SearchOptions = {}): Promise<SearchHit[]> {
    const units = parseQuery(query);
    if (units.length === 0) return [];
    await this.ready();
    const limit = clampTopK(topK);
    const phraseLength = Math.max(...units.map((u) => u.tokens.length));
    for (const attempt of matchAttempts(units)) {
      const stemmed = toTsquery(units, attempt, CONFIG);
      const rows = await rankedChunks(this.db, this.spanEstimates, { collection: collectionId, stemmed, exact: exactMatchOf(units, attempt), filter, limit });
      if (rows.length === 0) continue;
      // Read in the same statement (one snapshot) as the rows: a filter computed at another version is computed again by the caller.
      if (filter.aclVersion !== undefined && rows[0].acl_version !== filter.aclVersion) throw new AclVersionMovedError(rows[0].acl_version);
      return rows.map((row) => ({
        documentId: row.document_id,
        sourceId: row.source_id,
        path: row.path,
        title: row.title,
        chunkIndex: row.chunk_index,
        snippet: markedSnippet(row.snippet, row.body, phraseLength),
        text: row.body,
        score: Number(row.score),
        exact: row.exact,
        matched: attempt.matched,
        page: row.page,
        locationLabel: row.location,
        scanned: row.scanned,
      }));
    }
    return [];
  }

  async documentChunks(collectionId: string, documentId: string): Promise<ChunkInput[]> {
    await this.ready();
    return readDocumentChunks(this.db, collectionId, documentId);
  }

  async chunksByKey(collectionId: string, chunks: ChunkKey[]): Promise<Array<KeyedChunk | null>> {
    if (chunks.length === 0) return [];
    await this.ready();
    return readChunksByKey(this.db, collectionId, chunks);
  }

  async drop(collectionId: string): Promise<void> {
    await this.ready();
    await dropCollection(this.db, collectionId);
  }

  /** Nothing to set aside: the index lives in the team's database. */
  async moveAside(): Promise<string | null> {
    return null;
  }

  /** The pool belongs to the data source, which the server closes after the index: a background ANALYZE ends first. */
  async close(): Promise<void> {
    await this.statistics.stop();
  }

  /** The tables, created or upgraded once per process before the first statement (a failure is tried again next time). */
  private ready(): Promise<void> {
    this.schema ??= inTransaction(this.db, migrateSchema)
      .then(() => this.statistics.start())
      .catch((error) => {
        this.schema = null;
        throw error;
      });
    return this.schema;
  }
}
