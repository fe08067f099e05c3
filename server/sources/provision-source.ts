import crypto from "node:crypto";
import type { EntityManager } from "typeorm";
import { Collection } from "../data/entities/collection.entity";
import { DataSourceRecord } from "../data/entities/data-source.entity";
import { Pipeline } from "../data/entities/pipeline.entity";
import { autoCollectionName } from "./collection-name";

/**
 * The rows every new source comes with (docs/decisions/0005-data-source-creation.md): the source, its
 * auto-provisioned collection and the pipeline between them. Call inside the creating
 * transaction, so all three exist or none does.
 */
export async function provisionSource(tx: EntityManager, sourceId: string, kind: string, name: string, groupId: string) {
  const now = new Date();
  const collection = tx.create(Collection, { id: crypto.randomUUID(), name: autoCollectionName(name), ownerGroupId: groupId, createdAt: now });
  await tx.insert(Collection, collection);
  const source = tx.create(DataSourceRecord, { id: sourceId, name, kind, ownerGroupId: groupId, autoCollectionId: collection.id, createdAt: now });
  await tx.insert(DataSourceRecord, source);
  const pipeline = tx.create(Pipeline, {
    id: crypto.randomUUID(),
    name: `${name} pipeline`,
    description: `Ingests ${name} into ${collection.name}`,
    dataSourceId: sourceId,
    collectionId: collection.id,
    status: "inactive",
    createdAt: now,
  });
  await tx.insert(Pipeline, pipeline);
  return { source, pipeline };
}
