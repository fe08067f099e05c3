import type { EntityManager } from "typeorm";
import type { DataSourceRecord } from "../data/entities/data-source.entity";
import { SmbSourceRecord, smbPasswordKey } from "../data/entities/smb-source.entity";
import type { SecretStore } from "../secrets/secrets";
import type { Connector } from "./connector";
import { SmbConnector } from "./smb/smb.connector";
import type { DriveConnectors } from "./gdrive/drive-connectors";

export interface SmbDetails {
  remoteSystemUsername: string;
  remoteSystemName: string;
  localSystemName: string;
  defaultIp: string | null;
  port: number;
}

/** Builds SMB connectors; default_ip is dialled when given, else the server name. */
export function smbConnector(details: SmbDetails, password: string, timeoutMs: number): SmbConnector {
  return new SmbConnector({
    host: details.defaultIp || details.remoteSystemName,
    port: details.port,
    serverName: details.remoteSystemName,
    username: details.remoteSystemUsername,
    password,
    workstation: details.localSystemName || undefined,
    timeoutMs,
  });
}

/** The one place that turns a stored source into a live connector, by kind. */
export class ConnectorRegistry {
  constructor(
    private readonly secrets: SecretStore,
    private readonly smbTimeoutMs: number,
    /** null when no Google OAuth client is configured. */
    readonly drive: DriveConnectors | null = null,
  ) {}

  async forSource(db: EntityManager, source: DataSourceRecord): Promise<Connector> {
    switch (source.kind) {
      case "smb":
        return this.smbFor(db, source);
      case "drive":
        if (!this.drive) throw new Error("Google Drive is not configured on this instance: set GOOGLE_CLIENT_ID and GOOGLE_CLIENT_SECRET");
        return this.drive.forSource(db, source);
    }
  }

  async smbFor(db: EntityManager, source: DataSourceRecord): Promise<SmbConnector> {
    const details = await db.findOneOrFail(SmbSourceRecord, { where: { dataSourceId: source.id } });
    const password = (await this.secrets.get(smbPasswordKey(source.id))) ?? "";
    return smbConnector(details, password, this.smbTimeoutMs);
  }
}
