import crypto from "node:crypto";
import { In, type DataSource } from "typeorm";
import { BadRequestError } from "../errors";
import { Collection } from "../data/entities/collection.entity";
import { assertCanCreateCollectionIn, listGroupOwned, requireCollectionAccess, triggerablePipelinesInto } from "../access/access";
import type { Actor } from "../access/actor";
import type { DocumentPermissions } from "../access/document-permissions";
import type { IngestQueue } from "../ingest/job-queue";
import type { CollectionStats, DocumentSummary, SearchFilter, SearchHit, SearchIndex } from "../search/search-index";
import { ALREADY_RUNNING } from "../ingest/job-queue";
import { ModelRecord } from "../data/entities/model.entity";
import { canonicalModelName, OllamaError, OllamaUnreachableError } from "../llm/ollama.client";
import { ConflictError, ServiceUnavailableError } from "../errors";
import { defaultMode, type CollectionRetrieval, type SearchMode } from "./collection-retrieval";
import { DataSourceRecord } from "../data/entities/data-source.entity";
import { Pipeline } from "../data/entities/pipeline.entity";
import { findWhereIn } from "../data/plain-queries";
import { SmbSourceRecord } from "../connectors/smb/smb-source.entity";
import { normaliseServer } from "../accounts/smb-account-links";
import type { KindRegistry } from "../connectors/registry";
import type { DocumentLocator } from "../connectors/source-kind";
import { MAX_TOP_K } from "../search/query";
import { IndexDamagedError } from "../search/index-damage";
import { HITS_PER_DOCUMENT, PASSAGES_PER_DOCUMENT, RESULTS_FIRST_PER_DOCUMENT, groupByDocument, type CollectionSearch, type LocatedHit } from "./search-results";

export interface SearchRequest {
  q: string;
  topK: number;
  /** "document": top_k documents, each with its best passages. */
  groupBy?: "document";
  filter?: SearchFilter;
  /** keyword, semantic or hybrid; default: hybrid where the collection has an embedding model (collection-retrieval.ts). */
  mode?: SearchMode;
}

const NO_LOCATION = { path: null, url: null };

export class CollectionsService {
  constructor(
    private readonly db: DataSource,
    private readonly index: SearchIndex,
    private readonly queue: IngestQueue,
    private readonly retrieval: CollectionRetrieval,
    private readonly kinds: KindRegistry,
    /** Who may see which documents (the file server's permissions of sources that use them). */
    private readonly permissions: DocumentPermissions,
  ) {}

  async create(actor: Actor, name: string, ownerGroupId: string): Promise<Collection> {
    return this.db.transaction(async (tx) => {
      await assertCanCreateCollectionIn(tx, actor, ownerGroupId);
      if (await tx.exists(Collection, { where: { name } })) throw new BadRequestError(`A collection named "${name}" already exists`);
      const collection = tx.create(Collection, { id: crypto.randomUUID(), name, ownerGroupId, createdAt: new Date() });
      await tx.insert(Collection, collection);
      return collection;
    });
  }

  async list(actor: Actor): Promise<Array<{ collection: Collection; stats: CollectionStats; fileServers: string[] }>> {
    const collections = await listGroupOwned(this.db.manager, actor, Collection, "name");
    const ids = collections.map((collection) => collection.id);
    const [servers, stats] = await Promise.all([this.fileServers(ids), this.readableStatsOfMany(actor, ids)]);
    return collections.map((collection, i) => ({ collection, stats: stats[i], fileServers: servers.get(collection.id) ?? [] }));
  }

  /**
   * The counts the caller may see in each collection, together: the ACL versions in one read and
   * the counts in one more (one statement each on PostgreSQL), not a filter and a count per
   * collection. A damaged index file fails its ACLs' read; then each collection is counted alone,
   * so that one lists as damaged and the others as they are.
   */
  private async readableStatsOfMany(actor: Actor, collectionIds: string[]): Promise<CollectionStats[]> {
    try {
      return await this.permissions.readableMany(actor, collectionIds, (filters) =>
        this.index.statsOfMany(collectionIds.map((collectionId, i) => ({ collectionId, filter: filters[i] }))),
      );
    } catch (error) {
      if (!(error instanceof IndexDamagedError)) throw error;
      return Promise.all(collectionIds.map((id) => this.readableStats(actor, id)));
    }
  }

  /**
   * Per collection: the file servers (normalised as account links name them) of the SMB sources
   * with `source_permissions` that feed it, so a screen can say whose permissions apply (decision 0450).
   */
  async fileServers(collectionIds: string[]): Promise<Map<string, string[]>> {
    const byCollection = new Map<string, string[]>();
    if (collectionIds.length === 0) return byCollection;
    const pipelines = await this.db.manager.find(Pipeline, { where: { collectionId: In(collectionIds) } });
    if (pipelines.length === 0) return byCollection;
    const sources = await this.db.manager.find(SmbSourceRecord, { where: { dataSourceId: In([...new Set(pipelines.map((p) => p.dataSourceId))]), sourcePermissions: true } });
    const serverOf = new Map(sources.map((source) => [source.dataSourceId, normaliseServer(source.remoteSystemName)]));
    for (const pipeline of pipelines) {
      const server = serverOf.get(pipeline.dataSourceId);
      if (server === undefined) continue;
      const held = byCollection.get(pipeline.collectionId) ?? [];
      if (!held.includes(server)) byCollection.set(pipeline.collectionId, [...held, server].sort());
    }
    return byCollection;
  }

  async search(actor: Actor, collectionId: string, request: SearchRequest): Promise<CollectionSearch> {
    const collection = await requireCollectionAccess(this.db.manager, actor, collectionId);
    const mode = request.mode ?? defaultMode(collection.embeddingModel);
    if (mode !== "keyword" && !collection.embeddingModel) {
      throw new BadRequestError(`${mode} search needs an embedding model for the collection (PUT /collections/{id}/embedding); keyword search works without one`);
    }
    const grouped = request.groupBy === "document";
    const fetch = grouped ? Math.min(MAX_TOP_K, request.topK * HITS_PER_DOCUMENT) : request.topK;
    const perDocument = grouped ? { perDocument: PASSAGES_PER_DOCUMENT } : { firstPerDocument: RESULTS_FIRST_PER_DOCUMENT };
    // The caller's readable ACLs are part of the query, so top_k readable hits come back when that many exist.
    // A keyword search is the engine's ranking alone, which (on PostgreSQL) checks the ACL version the filter was computed at; a vector part would not.
    const versionChecked = mode === "keyword" || !collection.embeddingModel;
    const found = await this.permissions.readable(
      actor,
      collectionId,
      (readable) =>
        this.retrieval.search(collectionId, collection.embeddingModel, request.q, fetch, { ...request.filter, ...perDocument, readableAcls: readable.readableAcls, aclVersion: readable.aclVersion }, mode),
      { versionChecked },
    );
    const locate = await this.locators(found);
    const hits: LocatedHit[] = found.map((hit) => ({ ...hit, location: locate.get(hit.sourceId)?.(hit.path) ?? NO_LOCATION }));
    return {
      mode,
      hits,
      matched: hits.some((hit) => hit.matched === "any") ? "any" : "all",
      documents: grouped ? groupByDocument(hits, request.topK) : null,
    };
  }

  /**
   * Sets (or with null, clears) the collection's embedding model: a model in the catalog that
   * the model server embeds with (tried on a word). A collection that already has documents
   * gets an ingestion job per pipeline into it, whose embedding stage embeds them
   * (docs/decisions/0127-embeddings-on-enqueues-jobs.md). Answers the collection and the jobs started.
   */
  async setEmbeddingModel(actor: Actor, collectionId: string, rawModel: string | null): Promise<{ collection: Collection; jobIds: string[] }> {
    const collection = await requireCollectionAccess(this.db.manager, actor, collectionId);
    const model = rawModel === null ? null : canonicalModelName(rawModel);
    if (model !== null) await this.assertCanEmbed(model);
    await this.db.manager.update(Collection, { id: collectionId }, { embeddingModel: model });
    collection.embeddingModel = model;
    if (model === null) {
      await this.retrieval.vectors.drop(collectionId);
      return { collection, jobIds: [] };
    }
    const stats = await this.index.stats(collectionId);
    if (stats.documentCount === 0) return { collection, jobIds: [] };
    const jobIds: string[] = [];
    // Only the pipelines the caller could start themselves: one whose source they cannot reach stays as it is.
    for (const pipeline of await triggerablePipelinesInto(this.db.manager, actor, collectionId)) {
      try {
        jobIds.push((await this.queue.enqueue(pipeline.id)).id);
      } catch (error) {
        // A job already queued or running for that pipeline reads the model at its embedding stage.
        if (!(error instanceof ConflictError && error.message === ALREADY_RUNNING)) throw error;
      }
    }
    return { collection, jobIds };
  }

  private async assertCanEmbed(model: string): Promise<void> {
    const inCatalog = (await this.db.manager.find(ModelRecord)).some((m) => canonicalModelName(m.modelName) === model);
    if (!inCatalog) throw new BadRequestError(`The model ${model} is not in the catalog: pull it first (POST /models)`);
    try {
      await this.retrieval.embedder.embed(model, ["sluice"]);
    } catch (error) {
      if (error instanceof OllamaUnreachableError) throw new ServiceUnavailableError(error.message);
      if (error instanceof OllamaError) throw new BadRequestError(`The model ${model} cannot embed text: ${error.message}`);
      throw error;
    }
  }

  /** The counts the caller may see: documents of permission sources only where their file server lets them read. */
  async readableStats(actor: Actor, collectionId: string): Promise<CollectionStats> {
    try {
      return await this.permissions.readable(actor, collectionId, (readable) => this.index.stats(collectionId, readable));
    } catch (error) {
      // A file that cannot be read fails its ACLs' read first: the index's own stats list it as damaged (a listing must not fail for one).
      if (error instanceof IndexDamagedError) return this.index.stats(collectionId);
      throw error;
    }
  }

  /** Each hit's source asks its kind how its documents are located (a source deleted meanwhile has none). */
  private async locators(hits: SearchHit[]): Promise<Map<string, DocumentLocator>> {
    const ids = [...new Set(hits.map((hit) => hit.sourceId))];
    const locators = new Map<string, DocumentLocator>();
    if (ids.length === 0) return locators;
    // Plain statements: this runs on every search, where TypeORM's find costs more than the lookup (0532).
    const sources = await findWhereIn(this.db.manager, DataSourceRecord, "id", ids);
    for (const kind of this.kinds.all()) {
      const ofKind = sources.filter((s) => s.kind === kind.name).map((s) => s.id);
      if (ofKind.length) for (const [id, locator] of await kind.locators(this.db.manager, ofKind)) locators.set(id, locator);
    }
    return locators;
  }

  async documents(actor: Actor, collectionId: string, offset: number, limit: number): Promise<{ total: number; items: DocumentSummary[] }> {
    await requireCollectionAccess(this.db.manager, actor, collectionId);
    return this.permissions.readable(actor, collectionId, (readable) => this.index.listDocuments(collectionId, offset, limit, readable));
  }

  /** Removes the collection, the pipelines into it (and their jobs), and its index. */
  async delete(actor: Actor, collectionId: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      await requireCollectionAccess(tx, actor, collectionId);
      await this.queue.assertNoActiveJob(tx, { collectionId });
      await tx.delete(Collection, { id: collectionId });
    });
    await this.index.drop(collectionId);
    await this.retrieval.vectors.drop(collectionId);
  }
}
