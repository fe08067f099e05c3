import type { Connector, RemoteEntry } from "../connectors/connector";
import type { IndexedState, SearchIndex, StoredAcl } from "../search/search-index";
import { normaliseAcl, type Dacl } from "../search/stored-acl";

/**
 * Whether a run may leave an unchanged file's descriptor unread (issue 33 item 6, decision 0485).
 * Windows (NTFS) moves a file's ChangeTime when its descriptor changes; Samba lists the write
 * time as the ChangeTime (decision 0304), so nothing there shows an ACL change. Judged per run and
 * share from the listing itself: a share where some listed file's ChangeTime is later than its
 * LastWriteTime keeps a change time of its own, and a file there whose ChangeTime is the one
 * stored with its permissions kept its descriptor. A share whose every file shows the two equal
 * is read in full, as before. A wrong skip shows someone a file they may no longer read, so every
 * doubt reads.
 */

/** The share a path's change times are judged with: its first segment ("" for a file at the root). */
export function shareOf(path: string): string {
  const slash = path.indexOf("/");
  return slash < 0 ? "" : path.slice(0, slash);
}

/**
 * A change time kept apart from the write time: later than it. A write moves both, so a kept one
 * is not earlier but where a tool set the write time ahead; a server listing something else as
 * ChangeTime (its write time, a creation time, nothing) shows it equal or earlier.
 */
export function keepsChangeTime(changedAt: Date | null | undefined, modifiedAt: Date): boolean {
  return changedAt != null && changedAt.getTime() > modifiedAt.getTime();
}

export interface ChangeTimeTrustDeps {
  connector: Pick<Connector, "readSharePermissions">;
  index: Pick<SearchIndex, "acls">;
  collectionId: string;
  /** The file server whose permissions the documents keep (StoredAcl.server). */
  server: string;
  /** The source's documents as the run found them. */
  indexed: ReadonlyMap<string, IndexedState>;
}

export class ChangeTimeTrust {
  /** Shares whose listing in this run showed a kept change time: the verdict. */
  private readonly listed = new Set<string>();
  /** Shares whose stored documents did (earlier runs'): only a guess of the verdict, for what is read ahead. */
  private readonly stored = new Set<string>();
  private listingDone = false;
  private storedAcls: Promise<Map<string, StoredAcl>> | null = null;
  /** Per share and stored ACL id: whether the share's DACL now is the one that ACL holds. */
  private readonly sameShare = new Map<string, Promise<boolean>>();

  private constructor(private readonly deps: ChangeTimeTrustDeps) {
    for (const [path, state] of deps.indexed) if (keepsChangeTime(state.changedAt, state.modifiedAt)) this.stored.add(shareOf(path));
  }

  /** The run's judge; null where the connector cannot say a share's DACL (nothing is then left unread). */
  static of(deps: ChangeTimeTrustDeps): ChangeTimeTrust | null {
    return deps.connector.readSharePermissions ? new ChangeTimeTrust(deps) : null;
  }

  /** A file the listing found (every one, before the loop reads any). */
  noteListed(file: RemoteEntry): void {
    if (keepsChangeTime(file.changedAt, file.modifiedAt)) this.listed.add(shareOf(file.path));
  }

  /** The listing is whole: from now on the verdict is this run's. */
  listingComplete(): void {
    this.listingDone = true;
  }

  /**
   * While the listing goes on: whether the file will probably be left unread, so not worth reading
   * ahead. A wrong guess costs a read then (the loop reads a file not read ahead), never a skip.
   */
  likelyKept(file: RemoteEntry, state: IndexedState): boolean {
    const share = shareOf(file.path);
    return (this.listed.has(share) || this.stored.has(share)) && sameChangeTime(file, state);
  }

  /**
   * After the listing: whether the file's permissions are those stored, without its descriptor
   * read. Its share kept change times in this run's listing, its change time is the one stored
   * with its ACL, and its share's DACL (part of every file's ACL, moving no file's change time)
   * is the one that ACL holds.
   */
  async kept(file: RemoteEntry, state: IndexedState): Promise<boolean> {
    if (!this.listingDone || state.aclId === null) return false;
    const share = shareOf(file.path);
    if (!this.listed.has(share) || !sameChangeTime(file, state)) return false;
    const key = `${share}\u0000${state.aclId}`;
    let same = this.sameShare.get(key);
    if (!same) {
      same = this.shareUnchanged(file.path, state.aclId);
      this.sameShare.set(key, same);
    }
    return same;
  }

  private async shareUnchanged(path: string, aclId: string): Promise<boolean> {
    let stored: StoredAcl | undefined;
    let now: Dacl;
    try {
      stored = (await this.acls()).get(aclId);
      if (!stored || stored.server !== this.deps.server) return false;
      now = await this.deps.connector.readSharePermissions!(path);
    } catch {
      // Then the file's descriptor is read, which meets the same failure and handles it as a run always has.
      return false;
    }
    return sameDacl(now, stored.acl.share);
  }

  private acls(): Promise<Map<string, StoredAcl>> {
    this.storedAcls ??= this.deps.index.acls(this.deps.collectionId).then(({ acls }) => new Map(acls.map((acl) => [acl.id, acl])));
    return this.storedAcls;
  }
}

function sameChangeTime(file: RemoteEntry, state: IndexedState): boolean {
  return file.changedAt != null && state.changedAt !== null && file.changedAt.getTime() === state.changedAt.getTime();
}

function sameDacl(a: Dacl, b: Dacl): boolean {
  return normaliseAcl({ file: a, share: null }) === normaliseAcl({ file: b, share: null });
}
