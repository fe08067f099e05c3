import crypto from "node:crypto";
import type { DataSource } from "typeorm";
import { Collection } from "../data/entities/collection.entity";
import { DataSourceRecord } from "../data/entities/data-source.entity";
import { Pipeline } from "../data/entities/pipeline.entity";
import { listGroupOwned, requireDataSourceAccess, requireGroupMembership } from "../access/access";
import type { Actor } from "../access/actor";
import type { KindRegistry } from "../connectors/registry";
import type { CreatedSource, NewSource, SourceCreator } from "../connectors/source-kind";
import type { SecretStore } from "../secrets/secrets";
import type { SearchIndex } from "../search/search-index";
import { provisionSource } from "./provision-source";
import type { IngestQueue } from "../ingest/job-queue";

export interface ListedSource {
  source: DataSourceRecord;
  /** What the source's kind adds to the listing. */
  details: Record<string, unknown> | undefined;
}

/** What every kind of data source shares: the create steps, the listing and deletion, each kind served through the registry. */
export class SourcesService implements SourceCreator {
  constructor(
    private readonly db: DataSource,
    private readonly secrets: SecretStore,
    private readonly kinds: KindRegistry,
    private readonly index: SearchIndex,
    private readonly queue: IngestQueue,
  ) {}

  /**
   * The create steps of every kind: membership, the kind's own check (nothing is stored when it
   * fails), the secrets (keyed by the new id, removed again if the transaction fails), then
   * source, collection, pipeline and the kind's details in one transaction.
   */
  async create<T>(actor: Actor, input: NewSource<T>): Promise<CreatedSource<T>> {
    this.kinds.get(input.kind); // a kind the registry does not list cannot be stored
    await requireGroupMembership(this.db.manager, actor, input.groupId);
    await input.verify?.();
    const sourceId = crypto.randomUUID();
    const secrets = Object.entries(input.secrets?.(sourceId) ?? {});
    try {
      for (const [key, value] of secrets) await this.secrets.set(key, value);
      return await this.db.transaction(async (tx) => {
        const { source, pipeline } = await provisionSource(tx, sourceId, input.kind, input.name, input.groupId);
        const details = await input.details(tx, sourceId);
        return { source, details, pipeline };
      });
    } catch (error) {
      for (const [key] of secrets) await this.secrets.delete(key);
      throw error;
    }
  }

  async list(actor: Actor): Promise<ListedSource[]> {
    const sources = await listGroupOwned(this.db.manager, actor, DataSourceRecord, "created_at");
    const details = new Map<string, Record<string, unknown>>();
    for (const kind of this.kinds.all()) {
      const ids = sources.filter((s) => s.kind === kind.name).map((s) => s.id);
      if (ids.length) for (const [id, fields] of await kind.listedDetails(this.db.manager, ids)) details.set(id, fields);
    }
    return sources.map((source) => ({ source, details: details.get(source.id) }));
  }

  /**
   * Deletes the source, its pipelines, its kind's details (ON DELETE CASCADE) and its secrets.
   * Its auto-provisioned collection goes too, unless another source's pipeline still targets
   * it; collections that stay lose the documents that came from this source.
   */
  async delete(actor: Actor, dataSourceId: string): Promise<void> {
    const { source, dropped, kept } = await this.db.transaction(async (tx) => {
      const source = await requireDataSourceAccess(tx, actor, dataSourceId);
      await this.queue.assertNoActiveJob(tx, { dataSourceId });
      const targeted = (await tx.find(Pipeline, { where: { dataSourceId } })).map((p) => p.collectionId);
      await tx.delete(Pipeline, { dataSourceId });
      await tx.delete(DataSourceRecord, { id: dataSourceId });
      const dropped: string[] = [];
      const autoId = source.autoCollectionId;
      if (autoId && !(await tx.exists(Pipeline, { where: { collectionId: autoId } }))) {
        await tx.delete(Collection, { id: autoId });
        dropped.push(autoId);
      }
      return { source, dropped, kept: targeted.filter((id) => !dropped.includes(id)) };
    });
    for (const key of this.kinds.get(source.kind).secretKeys(dataSourceId)) await this.secrets.delete(key);
    for (const collectionId of dropped) await this.index.drop(collectionId);
    for (const collectionId of kept) {
      const documents = await this.index.indexedState(collectionId, dataSourceId);
      await this.index.removeDocuments(collectionId, dataSourceId, [...documents.keys()]);
    }
  }
}
