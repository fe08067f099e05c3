import crypto from "node:crypto";
import type { DataSource } from "typeorm";
import { BadRequestError, ServiceUnavailableError } from "../errors";
import { Collection } from "../data/entities/collection.entity";
import { DataSourceRecord } from "../data/entities/data-source.entity";
import { Pipeline } from "../data/entities/pipeline.entity";
import { SmbSourceRecord, smbPasswordKey } from "../data/entities/smb-source.entity";
import { listGroupOwned, requireDataSourceAccess, requireGroupMembership } from "../access/access";
import type { Actor } from "../access/actor";
import { ConnectorAuthError, ConnectorUnreachableError } from "../connectors/connector";
import { smbConnector, type ConnectorRegistry, type SmbDetails } from "../connectors/registry";
import type { ShareListing } from "../connectors/smb/smb.connector";
import type { SecretStore } from "../secrets/secrets";
import type { SearchIndex } from "../search/search-index";
import { provisionSource } from "./provision-source";
import type { IngestQueue } from "../ingest/job-queue";

export interface NewSmbSource extends SmbDetails {
  name: string;
  password: string;
}

export interface CreatedSource {
  source: DataSourceRecord;
  smb: SmbSourceRecord | null;
  pipeline: Pipeline;
}

export const INVALID_SMB_CREDENTIALS = "Invalid SMB credentials";

export class SourcesService {
  constructor(
    private readonly db: DataSource,
    private readonly secrets: SecretStore,
    private readonly connectors: ConnectorRegistry,
    private readonly index: SearchIndex,
    private readonly smbTimeoutMs: number,
    private readonly queue: IngestQueue,
  ) {}

  /**
   * Verifies the credentials by connecting, then creates the source, its collection and the
   * pipeline between them in one transaction. The password goes to the secret store first
   * (keyed by the new id) and is removed again if the transaction fails.
   */
  async createSmb(actor: Actor, groupId: string, input: NewSmbSource): Promise<CreatedSource> {
    await requireGroupMembership(this.db.manager, actor, groupId);
    await this.verifySmb(input);
    const sourceId = crypto.randomUUID();
    await this.secrets.set(smbPasswordKey(sourceId), input.password);
    try {
      return await this.db.transaction(async (tx) => {
        const { source, pipeline } = await provisionSource(tx, sourceId, "smb", input.name, groupId);
        const smb = tx.create(SmbSourceRecord, {
          dataSourceId: sourceId,
          remoteSystemUsername: input.remoteSystemUsername,
          remoteSystemName: input.remoteSystemName,
          localSystemName: input.localSystemName,
          defaultIp: input.defaultIp,
          port: input.port,
        });
        await tx.insert(SmbSourceRecord, smb);
        return { source, smb, pipeline };
      });
    } catch (error) {
      await this.secrets.delete(smbPasswordKey(sourceId));
      throw error;
    }
  }

  async list(actor: Actor): Promise<Array<{ source: DataSourceRecord; smb: SmbSourceRecord | null }>> {
    const sources = await listGroupOwned(this.db.manager, actor, DataSourceRecord, "created_at");
    const smb = sources.length
      ? await this.db.manager.createQueryBuilder(SmbSourceRecord, "d").where("d.data_source_id IN (:...ids)", { ids: sources.map((s) => s.id) }).getMany()
      : [];
    return sources.map((source) => ({ source, smb: smb.find((d) => d.dataSourceId === source.id) ?? null }));
  }

  /** Every share of the server with its first-level entries; 503 when the server can't be reached. */
  async listSmbShares(actor: Actor, dataSourceId: string): Promise<ShareListing> {
    const source = await requireDataSourceAccess(this.db.manager, actor, dataSourceId);
    if (source.kind !== "smb") throw new BadRequestError("This data source is not an SMB share");
    const connector = await this.connectors.smbFor(this.db.manager, source);
    try {
      return await connector.shareListing();
    } catch (error) {
      if (error instanceof ConnectorUnreachableError) throw new ServiceUnavailableError(`SMB server unreachable: ${error.message}`);
      if (error instanceof ConnectorAuthError) throw new BadRequestError(`${INVALID_SMB_CREDENTIALS}: the server refused the stored user name or password`);
      throw error;
    } finally {
      await connector.close();
    }
  }

  /**
   * Deletes the source, its pipelines and its secret. Its auto-provisioned collection goes
   * too, unless another source's pipeline still targets it; collections that stay lose the
   * documents that came from this source.
   */
  async delete(actor: Actor, dataSourceId: string): Promise<void> {
    const { dropped, kept } = await this.db.transaction(async (tx) => {
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
      return { dropped, kept: targeted.filter((id) => !dropped.includes(id)) };
    });
    await this.secrets.delete(smbPasswordKey(dataSourceId));
    for (const collectionId of dropped) await this.index.drop(collectionId);
    for (const collectionId of kept) {
      const documents = await this.index.indexedState(collectionId, dataSourceId);
      await this.index.removeDocuments(collectionId, dataSourceId, [...documents.keys()]);
    }
  }

  /** A refused login and an unreachable server both answer 400 Invalid SMB credentials (docs/decisions.md: Data source creation). */
  private async verifySmb(input: NewSmbSource): Promise<void> {
    const connector = smbConnector(input, input.password, this.smbTimeoutMs);
    try {
      await connector.test();
    } catch (error) {
      if (error instanceof ConnectorAuthError || error instanceof ConnectorUnreachableError) {
        throw new BadRequestError(INVALID_SMB_CREDENTIALS);
      }
      throw error;
    } finally {
      await connector.close();
    }
  }
}
