import type { EntityManager } from "typeorm";
import type { DataSourceRecord } from "../../data/entities/data-source.entity";
import type { SecretStore } from "../../secrets/secrets";
import { cookieSecurity } from "../../routing/transport-security";
import type { Connector } from "../connector";
import type { DocumentLocator, KindRouteDeps, KindRoutes, SourceKind, SourceKindModule } from "../source-kind";
import { driveConnectors, type DriveConnectors } from "./drive-connectors";
import { DriveFileRecord } from "./drive-file.entity";
import { DriveGrant } from "./drive-grant.entity";
import { DriveSourceRecord } from "./drive-source.entity";
import { DriveService, NOT_CONFIGURED } from "./drive.service";
import { driveCallbackRoutes, driveRoutes } from "./drive.routes";

const DRIVE = "drive";

/**
 * Google Drive: a user connects their Drive (OAuth grant, tokens in the secret store per
 * user), a drive source reads the files registered on it with its owner's grant.
 */
class DriveKind implements SourceKind {
  readonly name = DRIVE;

  /** null when no Google OAuth client is configured: the drive endpoints answer 503. */
  constructor(
    private readonly drive: DriveConnectors | null,
    private readonly secrets: SecretStore,
  ) {}

  /** The grant's tokens belong to the user, not to a source: nothing to delete with one. */
  secretKeys(): string[] {
    return [];
  }

  async connector(db: EntityManager, source: DataSourceRecord): Promise<Connector> {
    if (!this.drive) throw new Error(NOT_CONFIGURED);
    return this.drive.forSource(db, source);
  }

  /** A drive source adds nothing to the listing (its files are listed by the drive endpoints). */
  async listedDetails(): Promise<Map<string, Record<string, unknown>>> {
    return new Map();
  }

  /** Drive's web link is not stored (only the file id is): a drive document has no known location yet. */
  async locators(): Promise<Map<string, DocumentLocator>> {
    return new Map();
  }

  routes({ db, sources, publicUrl, audit }: KindRouteDeps): KindRoutes {
    const service = new DriveService(db, this.drive, sources, DRIVE, publicUrl, this.secrets);
    // The browser returns from Google without a bearer token: the OAuth state names the user.
    const secureCookie = cookieSecurity(publicUrl);
    return { public: driveCallbackRoutes(service, secureCookie), signedIn: driveRoutes(service, secureCookie, audit) };
  }
}

export const driveKind: SourceKindModule = {
  name: DRIVE,
  entities: [DriveGrant, DriveSourceRecord, DriveFileRecord],
  open: ({ secrets, config }) => new DriveKind(driveConnectors(config.google, secrets), secrets),
};
