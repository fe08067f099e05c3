import type { EntityManager } from "typeorm";
import { Collection } from "../data/entities/collection.entity";
import { DataSourceRecord } from "../data/entities/data-source.entity";

/** Names of what a group owns, which block its deletion. */
export async function groupOwnedResources(
  db: EntityManager,
  groupId: string,
): Promise<{ dataSources: string[]; collections: string[] }> {
  const sources = await db.find(DataSourceRecord, { where: { ownerGroupId: groupId }, order: { name: "ASC" } });
  const collections = await db.find(Collection, { where: { ownerGroupId: groupId }, order: { name: "ASC" } });
  return { dataSources: sources.map((s) => s.name), collections: collections.map((c) => c.name) };
}
