import crypto from "node:crypto";
import type { DataSource } from "typeorm";
import { BadRequestError } from "../errors";
import { Collection } from "../data/entities/collection.entity";
import { assertCanCreateCollectionIn, memberGroupIds, requireCollectionAccess } from "../access/access";
import type { Actor } from "../access/actor";

export interface CollectionStats {
  documentCount: number;
  chunkCount: number;
}

/** Per-collection counts from the search index; the index plugs in here once it exists. */
export interface CollectionIndex {
  stats(collectionId: string): Promise<CollectionStats>;
  drop(collectionId: string): Promise<void>;
}

export const EMPTY_INDEX: CollectionIndex = {
  stats: async () => ({ documentCount: 0, chunkCount: 0 }),
  drop: async () => {},
};

export class CollectionsService {
  constructor(
    private readonly db: DataSource,
    private readonly index: CollectionIndex = EMPTY_INDEX,
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
    const groups = await memberGroupIds(this.db.manager, actor);
    if (groups.length === 0) return [];
    const collections = await this.db.manager
      .createQueryBuilder(Collection, "c")
      .where("c.owner_group_id IN (:...groups)", { groups })
      .orderBy("c.name", "ASC")
      .getMany();
    return Promise.all(collections.map(async (collection) => ({ collection, stats: await this.index.stats(collection.id) })));
  }

  async delete(actor: Actor, collectionId: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      await requireCollectionAccess(tx, actor, collectionId);
      await tx.delete(Collection, { id: collectionId });
    });
    await this.index.drop(collectionId);
  }
}
