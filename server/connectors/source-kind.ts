import type { InstanceRoles } from "../access/instance-roles";
import type { AuditLog } from "../audit/audit";
import type { RequestHandler, Router } from "express";
import type { DataSource, EntityManager } from "typeorm";
import type { Actor } from "../access/actor";
import type { Config } from "../config";
import type { DataSourceRecord } from "../data/entities/data-source.entity";
import type { Pipeline } from "../data/entities/pipeline.entity";
import type { SecretStore } from "../secrets/secrets";
import type { Connector } from "./connector";
import type { ThreadConnectorSpec } from "./thread-connector";
import type { GroupResolver } from "../accounts/smb-account-links";

/**
 * A kind of data source (SMB share, Google Drive, local folder) is one folder under
 * connectors/ that exports a SourceKindModule, listed by name in registry.ts. The kind owns
 * everything about itself: its details tables, secrets, connector, how its details are listed
 * and its kind-specific routes. Everything shared (list, delete, the create steps) goes
 * through the registry.
 */
export interface SourceKindModule {
  /** The value of data_sources.kind. */
  readonly name: string;
  /** The TypeORM entities of its details tables (their migrations live with the others in data/migrations). */
  // biome-ignore lint/complexity/noBannedTypes: TypeORM's own type for an entity class is Function
  readonly entities: Function[];
  /** The kind at run time, in the API and in worker processes. */
  open(deps: KindDeps): SourceKind;
}

export interface KindDeps {
  secrets: SecretStore;
  config: Config;
}

export interface SourceKind {
  readonly name: string;
  /** The secret-store keys of one source, deleted with it. */
  secretKeys(sourceId: string): string[];
  /** A live connector for a stored source of this kind (ingestion and kind routes). */
  connector(db: EntityManager, source: DataSourceRecord): Promise<Connector>;
  /** The same connector as plain data, for an ingestion job's own thread; absent: this kind's jobs run on the API's thread. */
  threadConnector?(db: EntityManager, source: DataSourceRecord): Promise<ThreadConnectorSpec>;
  /**
   * The file server whose permissions decide who reads this source's documents (its normalised
   * host, lower case) when the source uses them (`source_permissions`); null: every member of the
   * collection's group. Absent: this kind never does.
   */
  permissionServer?(db: EntityManager, source: DataSourceRecord): Promise<string | null>;
  /** How a run of such a source asks its server, with the source's own account, for linked accounts' groups; absent with permissionServer absent. */
  groupResolver?(db: EntityManager, source: DataSourceRecord): Promise<GroupResolver>;
  /** Fields this kind adds to each of its sources in GET /data_sources, by source id (e.g. {folder_source: {...}}). */
  listedDetails(db: EntityManager, sourceIds: string[]): Promise<Map<string, Record<string, unknown>>>;
  /** How to tell where each document of these sources is, by source id (search results); a source missing from the map has no known location. */
  locators(db: EntityManager, sourceIds: string[]): Promise<Map<string, DocumentLocator>>;
  /** The kind's own routes, mounted under /api by the app. */
  routes(deps: KindRouteDeps): KindRoutes;
}

/**
 * Where a document is, as its user knows it: `path` as the user's machine names the file
 * (`\\server\share\dir\file.pdf`, `/srv/docs/file.pdf`), `url` to open or share it
 * (`smb://…`, `file://…`, a web link); null where this kind cannot tell.
 */
export interface DocumentLocation {
  path: string | null;
  url: string | null;
}

/** A document's location from its path within the source. */
export type DocumentLocator = (documentPath: string) => DocumentLocation;

/** Made with routing/documented-router.ts, so every route is in GET /api/openapi.json. */
export interface KindRoutes {
  /** Routes a browser reaches without a bearer token (an OAuth callback); mounted before authentication. */
  public?: Router;
  /** Routes for signed-in callers. */
  signedIn: Router;
}

export interface KindRouteDeps {
  db: DataSource;
  /** The shared create steps of every kind. */
  sources: SourceCreator;
  /** The address browsers use (OAuth redirect URIs). */
  publicUrl: string;
  /** Who may do instance-wide things (folder sources reach this machine's disks). */
  roles: InstanceRoles;
  /** Where a kind's create route records `source.created` (routing/audit-event.ts). */
  audit: AuditLog;
  /**
   * The instance's one per-user count of requests that connect to an SMB server on the caller's
   * behalf (smb-connect-limiter.ts), shared with the account link route (decisions 0044, 0486).
   */
  smbConnectAttempts: RequestHandler;
}

/** How a kind creates a source through the shared steps (see SourcesService.create). */
export interface NewSource<T> {
  kind: string;
  name: string;
  groupId: string;
  /** Checks the source can be read before anything is stored; throws a typed HTTP error that says what to fix. */
  verify?: () => Promise<void>;
  /** Secrets to keep under the new source's id (secret store, never a column); removed again if creation fails. */
  secrets?: (sourceId: string) => Record<string, string>;
  /** Writes the kind's details rows inside the creating transaction. */
  details: (tx: EntityManager, sourceId: string) => Promise<T>;
}

export interface CreatedSource<T> {
  source: DataSourceRecord;
  details: T;
  pipeline: Pipeline;
}

export interface SourceCreator {
  create<T>(actor: Actor, input: NewSource<T>): Promise<CreatedSource<T>>;
}
