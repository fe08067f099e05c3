import { In, type EntityManager } from "typeorm";
import type { DataSourceRecord } from "../../data/entities/data-source.entity";
import { findWhereIn } from "../../data/plain-queries";
import type { SecretStore } from "../../secrets/secrets";
import type { DocumentLocator, KindRouteDeps, KindRoutes, SourceKind, SourceKindModule } from "../source-kind";
import { smbLocation } from "./smb-location";
import { SmbSourceRecord, smbPasswordKey } from "./smb-source.entity";
import { SmbSources } from "./smb-sources.service";
import { openSmbConnector, smbConnectorOptions, type SmbConnector, type SmbConnectorOptions, type SmbSettings } from "./smb.connector";
import type { ThreadConnectorSpec } from "../thread-connector";
import { SmbAllowedNetworks } from "./smb-allowed-networks";
import { isLanBinding } from "../../net/local-addresses";
import { presentSmbSource } from "./smb.presenters";
import { smbRoutes } from "./smb.routes";
import type { Config } from "../../config";
import { normaliseServer, type GroupResolver } from "../../accounts/smb-account-links";
import { threadGroupResolver } from "./smb-check-thread";

const SMB = "smb";

/** An SMB network share: details in smb_sources, the password in the secret store. */
class SmbKind implements SourceKind {
  readonly name = SMB;

  constructor(
    private readonly secrets: SecretStore,
    private readonly settings: SmbSettings,
  ) {}

  secretKeys(sourceId: string): string[] {
    return [smbPasswordKey(sourceId)];
  }

  async connector(db: EntityManager, source: DataSourceRecord): Promise<SmbConnector> {
    const details = await db.findOneOrFail(SmbSourceRecord, { where: { dataSourceId: source.id } });
    const password = (await this.secrets.get(smbPasswordKey(source.id))) ?? "";
    return openSmbConnector(details, password, this.settings);
  }

  async threadConnector(db: EntityManager, source: DataSourceRecord): Promise<ThreadConnectorSpec> {
    return { kind: "smb", options: await this.options(db, source) };
  }

  /** With `source_permissions`, the server whose Windows account links apply (named as the links name it). */
  async permissionServer(db: EntityManager, source: DataSourceRecord): Promise<string | null> {
    const details = await db.findOneOrFail(SmbSourceRecord, { where: { dataSourceId: source.id } });
    return details.sourcePermissions === true ? normaliseServer(details.remoteSystemName) : null;
  }

  /** The source's own account asks, on SMB check threads (never this one), each bounded by SMB_CHECK_DEADLINE_S. */
  async groupResolver(db: EntityManager, source: DataSourceRecord): Promise<GroupResolver> {
    return threadGroupResolver(await this.options(db, source), this.settings.checkDeadlineMs);
  }

  /** The stored source as plain connector options, its password from the secret store. */
  private async options(db: EntityManager, source: DataSourceRecord): Promise<SmbConnectorOptions> {
    const details = await db.findOneOrFail(SmbSourceRecord, { where: { dataSourceId: source.id } });
    const password = (await this.secrets.get(smbPasswordKey(source.id))) ?? "";
    return smbConnectorOptions(details, password, this.settings);
  }

  async listedDetails(db: EntityManager, sourceIds: string[]): Promise<Map<string, Record<string, unknown>>> {
    const rows = await db.find(SmbSourceRecord, { where: { dataSourceId: In(sourceIds) } });
    return new Map(rows.map((row) => [row.dataSourceId, { smb_source: presentSmbSource(row) }]));
  }

  async locators(db: EntityManager, sourceIds: string[]): Promise<Map<string, DocumentLocator>> {
    const rows = await findWhereIn(db, SmbSourceRecord, "dataSourceId", sourceIds);
    return new Map(rows.map((row) => [row.dataSourceId, (documentPath: string) => smbLocation(row, documentPath)]));
  }

  routes({ db, sources, audit, smbConnectAttempts }: KindRouteDeps): KindRoutes {
    return { signedIn: smbRoutes(new SmbSources(db, sources, this, this.settings), smbConnectAttempts, audit) };
  }
}

/** How every SMB connection of this instance dials and waits: sources, checks and Windows account links alike. */
export function smbSettingsOf(config: Config): SmbSettings {
  return {
    timeoutMs: config.smbTimeoutMs,
    checkDeadlineMs: config.smbCheckDeadlineMs,
    allowedNetworks: new SmbAllowedNetworks(config.smbAllowedNetworks, { ports: config.smbAllowedPorts, lan: isLanBinding(config.host) }),
  };
}

export const smbKind: SourceKindModule = {
  name: SMB,
  entities: [SmbSourceRecord],
  open: ({ secrets, config }) =>
    new SmbKind(secrets, smbSettingsOf(config)),
};
