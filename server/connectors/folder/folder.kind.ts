import { In, type EntityManager } from "typeorm";
import type { DataSourceRecord } from "../../data/entities/data-source.entity";
import { findWhereIn } from "../../data/plain-queries";
import type { DocumentLocator, KindRouteDeps, KindRoutes, SourceKind, SourceKindModule } from "../source-kind";
import { folderLocation } from "./folder-location";
import { FolderSources } from "./folder-sources.service";
import { FolderSourceRecord } from "./folder-source.entity";
import { FolderConnector } from "./folder.connector";
import type { FolderRules } from "./folder-rules";
import type { ThreadConnectorSpec } from "../thread-connector";
import { presentFolderSource } from "./folder.presenters";
import { folderRoutes } from "./folder.routes";

const FOLDER = "folder";

/** A folder on this machine or a share mounted on it, inside FOLDER_SOURCE_ROOTS (none: the kind is off). */
class FolderKind implements SourceKind {
  readonly name = FOLDER;

  constructor(private readonly rules: FolderRules) {}

  secretKeys(): string[] {
    return [];
  }

  async connector(db: EntityManager, source: DataSourceRecord): Promise<FolderConnector> {
    const details = await db.findOneOrFail(FolderSourceRecord, { where: { dataSourceId: source.id } });
    return new FolderConnector(details.path, this.rules);
  }

  async threadConnector(db: EntityManager, source: DataSourceRecord): Promise<ThreadConnectorSpec> {
    const details = await db.findOneOrFail(FolderSourceRecord, { where: { dataSourceId: source.id } });
    return { kind: "folder", folder: details.path, rules: this.rules };
  }

  async listedDetails(db: EntityManager, sourceIds: string[]): Promise<Map<string, Record<string, unknown>>> {
    const rows = await db.find(FolderSourceRecord, { where: { dataSourceId: In(sourceIds) } });
    return new Map(rows.map((row) => [row.dataSourceId, { folder_source: presentFolderSource(row) }]));
  }

  async locators(db: EntityManager, sourceIds: string[]): Promise<Map<string, DocumentLocator>> {
    const rows = await findWhereIn(db, FolderSourceRecord, "dataSourceId", sourceIds);
    return new Map(rows.map((row) => [row.dataSourceId, (documentPath: string) => folderLocation(row.path, documentPath)]));
  }

  routes({ sources, roles, audit }: KindRouteDeps): KindRoutes {
    return { signedIn: folderRoutes(new FolderSources(sources, FOLDER, this.rules), roles, audit) };
  }
}

export const folderKind: SourceKindModule = {
  name: FOLDER,
  entities: [FolderSourceRecord],
  open: ({ config }) => new FolderKind({ roots: config.folderSourceRoots, dataDir: config.dataDir, dotfiles: config.folderSourceDotfiles }),
};
