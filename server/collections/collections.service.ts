import crypto from "node:crypto";
import type { DataSource } from "typeorm";
import { BadRequestError } from "../errors";
import { Collection } from "../data/entities/collection.entity";
import { assertCanCreateCollectionIn, listGroupOwned, requireCollectionAccess } from "../access/access";
import type { Actor } from "../access/actor";
import type { IngestQueue } from "../ingest/job-queue";
import type { CollectionStats, DocumentSummary, SearchHit, SearchIndex } from "../search/search-index";

export class CollectionsService {
  constructor(
    private readonly db: DataSource,
    private readonly index: SearchIndex,
    private readonly queue: IngestQueue,
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

  async list(actor: Actor): Promise<Array<{ collection: Collection; stats: CollectionStats }>> {
    const collections = await listGroupOwned(this.db.manager, actor, Collection, "name");
    return Promise.all(collections.map(async (collection) => ({ collection, stats: await this.index.stats(collection.id) })));
  }

  async search(actor: Actor, collectionId: string, query: string, topK: number): Promise<SearchHit[]> {
    await requireCollectionAccess(this.db.manager, actor, collectionId);
    return this.index.search(collectionId, query, topK);
  }

  async documents(actor: Actor, collectionId: string, offset: number, limit: number): Promise<{ total: number; items: DocumentSummary[] }> {
    await requireCollectionAccess(this.db.manager, actor, collectionId);
    return this.index.listDocuments(collectionId, offset, limit);
  }

  /** Removes the collection, the pipelines into it (and their jobs), and its index. */
  async delete(actor: Actor, collectionId: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      await requireCollectionAccess(tx, actor, collectionId);
      await this.queue.assertNoActiveJob(tx, { collectionId });
      await tx.delete(Collection, { id: collectionId });
    });
    await this.index.drop(collectionId);
  }
}
