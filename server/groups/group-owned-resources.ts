import type { EntityManager } from "typeorm";
import { Collection } from "../data/entities/collection.entity";

/** Names of what a group owns, which block its deletion. Data sources join here when they exist. */
export async function groupOwnedResources(
  db: EntityManager,
  groupId: string,
): Promise<{ dataSources: string[]; collections: string[] }> {
  const collections = await db.find(Collection, { where: { ownerGroupId: groupId }, order: { name: "ASC" } });
  return { dataSources: [], collections: collections.map((c) => c.name) };
}
