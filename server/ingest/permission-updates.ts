import { aclIdOf, type FileAcl } from "../search/stored-acl";
import { ConnectorEntryError, ConnectorUnreachableError, type Connector, type RemoteEntry } from "../connectors/connector";
import type { DocumentPermissions, IndexedState, PermissionsUpdate, SearchIndex } from "../search/search-index";
import type { JobCounters } from "./job-counters";

/**
 * The file-server permissions of a run (issue 33 items 2 and 6): read with each file a source
 * with source_permissions indexes, and for a file whose content is unchanged, read again and
 * written in place of the old ones, without reading the content, when they moved. Read at every
 * run where the listing's change time cannot be trusted: Samba (4.17) lists a file's modification
 * time as its change time, so an ACL changed there moves nothing a listing shows (decision 0304);
 * where it can (Windows), change-time-trust.ts leaves a file whose change time stayed unread (0485).
 */

/** Reads one file's permissions (its DACL and its share's) as a document keeps them. */
export type PermissionReader = (file: RemoteEntry) => Promise<DocumentPermissions>;

/** The run's reader of permissions; null for a plain source. */
export function permissionReader(connector: Connector, server: string | null): PermissionReader | null {
  if (server === null) return null;
  if (!connector.readPermissions) throw new Error("This source uses the file server's permissions, but its kind of source cannot read them");
  const read = connector.readPermissions.bind(connector);
  return async (file) => ({ server, acl: await read(file.path), changedAt: file.changedAt ?? null });
}

/** Updates written together: one transaction per this many files whose permissions moved. */
const UPDATES_PER_BATCH = 256;

export class PermissionUpdates {
  private pending: PermissionsUpdate[] = [];
  private readonly ids = new WeakMap<FileAcl, Map<string, string>>();

  constructor(
    private readonly index: Pick<SearchIndex, "updatePermissions" | "removeDocuments">,
    private readonly collectionId: string,
    private readonly sourceId: string,
    private readonly progress: JobCounters,
  ) {}

  /**
   * A file whose content is unchanged: its permissions read again (one round trip), written when
   * they or the change time moved, dropped when the source no longer uses them. Answers false
   * when the file failed (its descriptor could not be read: its document is removed, since what
   * it held may no longer be the readers' it was).
   */
  async check(file: RemoteEntry, state: IndexedState, read: PermissionReader | null): Promise<boolean> {
    if (!read) {
      if (state.aclId !== null) await this.add({ path: file.path, permissions: null }, true);
      return true;
    }
    let permissions: DocumentPermissions;
    try {
      permissions = await read(file);
    } catch (error) {
      if (error instanceof ConnectorUnreachableError) throw new Error(`Source unreachable: ${error.message}`);
      if (!(error instanceof ConnectorEntryError)) throw error;
      await this.index.removeDocuments(this.collectionId, this.sourceId, [file.path]);
      this.progress.failed(file.path, error.message);
      return false;
    }
    const aclChanged = this.idOf(permissions) !== state.aclId;
    const changedAt = file.changedAt?.getTime() ?? null;
    // A change time that moved for something else (attributes) stores the new time only, and is not counted.
    if (aclChanged || changedAt !== (state.changedAt?.getTime() ?? null)) await this.add({ path: file.path, permissions }, aclChanged);
    return true;
  }

  /** An ACL's id, hashed once per ACL object (the connector hands the files of one descriptor one object). */
  private idOf(permissions: DocumentPermissions): string {
    let byServer = this.ids.get(permissions.acl);
    if (!byServer) {
      byServer = new Map();
      this.ids.set(permissions.acl, byServer);
    }
    let id = byServer.get(permissions.server);
    if (id === undefined) {
      id = aclIdOf(permissions.server, permissions.acl);
      byServer.set(permissions.server, id);
    }
    return id;
  }

  private async add(update: PermissionsUpdate, changed: boolean): Promise<void> {
    this.pending.push(update);
    if (changed) this.progress.permissionsChanged();
    if (this.pending.length >= UPDATES_PER_BATCH) await this.flush();
  }

  async flush(): Promise<void> {
    const batch = this.pending.splice(0, this.pending.length);
    if (batch.length > 0) await this.progress.stats.time("commit", () => this.index.updatePermissions(this.collectionId, this.sourceId, batch));
  }
}
