import type { EntityManager } from "typeorm";
import type { DataSourceRecord } from "../../data/entities/data-source.entity";
import { DriveFileRecord } from "./drive-file.entity";
import { DriveSourceRecord } from "./drive-source.entity";
import { DriveTokens } from "./drive-tokens";
import type { SecretStore } from "../../secrets/secrets";
import { GoogleOAuthClient, type GoogleClientConfig } from "./google-oauth";
import { DriveApi } from "./drive-api";
import { DriveConnector } from "./drive.connector";

/** The Drive integration of the instance, or null when no OAuth client is configured (drive endpoints answer 503). */
export function driveConnectors(google: GoogleClientConfig | null, secrets: SecretStore): DriveConnectors | null {
  if (!google) return null;
  return new DriveConnectors(new DriveTokens(secrets, new GoogleOAuthClient(google)), google.apiUrl);
}

/** Turns a stored drive source into a connector that acts with its owner's grant. */
export class DriveConnectors {
  constructor(
    readonly tokens: DriveTokens,
    private readonly apiUrl: string,
  ) {}

  /** A client bound to one fixed access token (right after the code exchange, before anything is stored). */
  apiWithToken(token: string): DriveApi {
    return new DriveApi(this.apiUrl, async () => token);
  }

  apiFor(userId: string): DriveApi {
    return new DriveApi(this.apiUrl, async (force) => (await this.tokens.accessToken(userId, force)).token);
  }

  async forSource(db: EntityManager, source: DataSourceRecord): Promise<DriveConnector> {
    const details = await db.findOneOrFail(DriveSourceRecord, { where: { dataSourceId: source.id } });
    const files = await db.find(DriveFileRecord, { where: { dataSourceId: source.id }, order: { registeredAt: "ASC" } });
    return new DriveConnector(this.apiFor(details.ownerUserId), files.map((f) => f.fileId));
  }
}
