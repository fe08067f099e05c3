import type { EntityManager } from "typeorm";
import type { DataSourceRecord } from "../data/entities/data-source.entity";
import type { Connector } from "./connector";
import type { ThreadConnectorSpec } from "./thread-connector";
import type { GroupResolver } from "../accounts/smb-account-links";
import { folderKind } from "./folder/folder.kind";
import { driveKind } from "./gdrive/drive.kind";
import { smbKind } from "./smb/smb.kind";
import type { KindDeps, SourceKind, SourceKindModule } from "./source-kind";

/** Every kind of data source, one line each: a new kind is a new folder under connectors/ and a line here. */
const SOURCE_KINDS: readonly SourceKindModule[] = [
  smbKind,
  driveKind,
  folderKind,
];

/** The details tables of every kind, for the database to map. */
// biome-ignore lint/complexity/noBannedTypes: TypeORM's own type for an entity class is Function
export const KIND_ENTITIES: Function[] = SOURCE_KINDS.flatMap((kind) => kind.entities);

/** The kinds at run time, handed out by name. */
export class KindRegistry {
  private readonly kinds: Map<string, SourceKind>;

  constructor(deps: KindDeps) {
    this.kinds = new Map(SOURCE_KINDS.map((kind) => [kind.name, kind.open(deps)]));
  }

  all(): SourceKind[] {
    return [...this.kinds.values()];
  }

  get(name: string): SourceKind {
    const kind = this.kinds.get(name);
    // Only a row written by a newer version (or by hand) can name a kind this build does not know.
    if (!kind) throw new Error(`Unknown data source kind "${name}"`);
    return kind;
  }

  /** The one place that turns a stored source into a live connector, by kind. */
  forSource(db: EntityManager, source: DataSourceRecord): Promise<Connector> {
    return this.get(source.kind).connector(db, source);
  }

  /** The file server whose permissions apply to the source's documents, or null (SourceKind.permissionServer). */
  async permissionServer(db: EntityManager, source: DataSourceRecord): Promise<string | null> {
    const kind = this.get(source.kind);
    return kind.permissionServer ? kind.permissionServer(db, source) : null;
  }

  /** How a run asks the source's server for linked accounts' groups (SourceKind.groupResolver); null for a kind without permissions. */
  async groupResolver(db: EntityManager, source: DataSourceRecord): Promise<GroupResolver | null> {
    const kind = this.get(source.kind);
    return kind.groupResolver ? kind.groupResolver(db, source) : null;
  }

  /** The source's connector as plain data for an ingestion job's own thread; null for a kind whose jobs run on the API's thread. */
  async threadConnector(db: EntityManager, source: DataSourceRecord): Promise<ThreadConnectorSpec | null> {
    const kind = this.get(source.kind);
    return kind.threadConnector ? kind.threadConnector(db, source) : null;
  }
}
