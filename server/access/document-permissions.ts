import { AclVersionMovedError } from "../search/acl-version-moved";
import type { ReadableFilter, SearchIndex, StoredAcl } from "../search/search-index";
import type { Actor } from "./actor";
import { EVERYONE_SID, mayRead } from "./windows-acl";

/**
 * Which documents of a collection one person may see (issue 33 item 5): the ACL ids their SIDs
 * may read, computed once per request and handed to the engines as part of the query
 * (SearchFilter.readableAcls), never a pass over results. Documents without an ACL (a plain
 * source's) stay visible to every member. Management (runs, schedules, deleting) never asks.
 */

/** A person's SIDs on one file server (its normalised host): their linked account's, its groups', and the well-known ones. */
export type SidsOfUser = (userId: string, server: string) => Promise<string[]>;

/** Until a person's linked accounts are wired in (the SMB account links): Everyone only, so only what Everyone may read shows. */
export const EVERYONE_ONLY: SidsOfUser = async () => [EVERYONE_SID];

/** What is read of the index: the collection's ACLs and their version (one collection's, or several at once). */
export type AclSource = Pick<SearchIndex, "acls" | "aclVersion" | "aclVersions" | "checksAclVersion">;

/** Times a version-checked search is asked again as the ACLs keep moving under it, before the version is read around it as elsewhere. */
const CHECKED_ATTEMPTS = 3;

/** Collections whose ACLs are held, and readable sets per SID set: a few hundred small entries each at most. */
const MAX_CACHED = 2_000;

export class DocumentPermissions {
  /** Per collection: its ACLs at a version, and the servers they name. */
  private readonly aclsOf = new Map<string, { version: string; acls: StoredAcl[]; servers: string[] }>();
  /** Per collection + ACL version + SID sets: the readable ids (null: every ACL is readable). */
  private readonly readableOf = new Map<string, readonly string[] | null>();

  constructor(
    private readonly index: AclSource,
    private readonly sidsOfUser: SidsOfUser = EVERYONE_ONLY,
  ) {}

  /**
   * Runs `work` with the caller's filter. Without one (the collection has no ACL, or the caller
   * may read every one it has), the ACL version is read again after the work: a batch with a new
   * ACL committed meanwhile (in the same transaction as its documents) might have shown, so the
   * work runs again with a filter that knows it.
   */
  async readable<T>(actor: Actor, collectionId: string, work: (filter: ReadableFilter) => Promise<T>, options: { versionChecked?: boolean } = {}): Promise<T> {
    if (options.versionChecked && this.index.checksAclVersion) return this.readableChecked(actor, collectionId, work);
    const before = await this.filterOf(actor, collectionId);
    const result = await work(before.filter);
    if (before.filter.readableAcls !== undefined) return result;
    if ((await this.index.aclVersion(collectionId)) === before.version) return result;
    return work((await this.filterOf(actor, collectionId)).filter);
  }

  /**
   * `readable` for a work that hands `filter.aclVersion` to an engine whose ranking statement
   * reads the ACL version itself (`checksAclVersion`: a keyword search on PostgreSQL): the filter
   * is computed at the version held from an earlier request, without reading it first, and a
   * ranking that saw another version fails (AclVersionMovedError); the filter is then computed at
   * that version and the work runs again. A result is only ever answered through a filter
   * computed at the version its rows were read at, so no one gets a file they may not read.
   */
  private async readableChecked<T>(actor: Actor, collectionId: string, work: (filter: ReadableFilter) => Promise<T>): Promise<T> {
    const sids = (server: string) => this.sidsOfUser(actor.userId, server).then((list) => new Set(list.map((sid) => sid.toUpperCase())));
    let acls = this.aclsOf.get(collectionId) ?? (await this.currentAcls(collectionId));
    for (let attempt = 1; attempt <= CHECKED_ATTEMPTS; attempt++) {
      const { filter, version } = await this.filterAt(collectionId, acls, sids);
      try {
        return await work({ ...filter, aclVersion: version });
      } catch (error) {
        if (!(error instanceof AclVersionMovedError)) throw error;
        acls = await this.currentAcls(collectionId, error.version);
      }
    }
    return this.readable(actor, collectionId, work);
  }

  /**
   * `readable` for several collections at once (a listing's counts, issue 33's N+1): their ACL
   * versions in one read, the caller's SIDs asked once per server, then `work` once with every
   * collection's filter, in order. As there, a collection answered without a filter whose version
   * moved meanwhile is answered again, with its filter.
   */
  async readableMany<T>(actor: Actor, collectionIds: readonly string[], work: (filters: ReadableFilter[]) => Promise<T[]>): Promise<T[]> {
    if (collectionIds.length === 0) return [];
    const sidsOf = new Map<string, Promise<Set<string>>>();
    const sids = (server: string) => {
      let held = sidsOf.get(server);
      if (!held) {
        held = this.sidsOfUser(actor.userId, server).then((list) => new Set(list.map((sid) => sid.toUpperCase())));
        sidsOf.set(server, held);
      }
      return held;
    };
    const filtersAt = async (versions: string[]) =>
      Promise.all(collectionIds.map(async (id, i) => this.filterAt(id, await this.currentAcls(id, versions[i]), sids)));
    const before = await filtersAt(await this.index.aclVersions(collectionIds));
    const results = await work(before.map((f) => f.filter));
    const unfiltered = collectionIds.map((_, i) => i).filter((i) => before[i].filter.readableAcls === undefined);
    if (unfiltered.length === 0) return results;
    const now = await this.index.aclVersions(unfiltered.map((i) => collectionIds[i]));
    const moved = unfiltered.filter((i, k) => now[k] !== before[i].version);
    if (moved.length === 0) return results;
    const again = await work(await Promise.all(moved.map(async (i) => (await this.filterAt(collectionIds[i], await this.currentAcls(collectionIds[i]), sids)).filter)));
    moved.forEach((i, k) => {
      results[i] = again[k];
    });
    return results;
  }

  /** The caller's filter in one collection, with the ACL version it was computed at. */
  async filterOf(actor: Actor, collectionId: string): Promise<{ filter: ReadableFilter; version: string }> {
    const sids = (server: string) => this.sidsOfUser(actor.userId, server).then((list) => new Set(list.map((sid) => sid.toUpperCase())));
    return this.filterAt(collectionId, await this.currentAcls(collectionId), sids);
  }

  /** The filter of a person whose SIDs per server `sidsOn` answers, over the collection's ACLs at one version. */
  private async filterAt(
    collectionId: string,
    { version, acls, servers }: { version: string; acls: StoredAcl[]; servers: string[] },
    sidsOn: (server: string) => Promise<Set<string>>,
  ): Promise<{ filter: ReadableFilter; version: string }> {
    if (acls.length === 0) return { filter: {}, version };
    const sids = new Map<string, Set<string>>();
    for (const server of servers) sids.set(server, await sidsOn(server));
    const key = JSON.stringify([collectionId, version, servers.map((server) => [server, [...sids.get(server)!].sort()])]);
    let readable = this.readableOf.get(key);
    if (readable === undefined) {
      const ids = acls.filter((stored) => mayRead(stored.acl, sids.get(stored.server)!)).map((stored) => stored.id);
      readable = ids.length === acls.length ? null : ids.sort();
      remember(this.readableOf, key, readable);
    }
    return { filter: readable === null ? {} : { readableAcls: readable }, version };
  }

  /** The collection's ACLs, read again only when their version (`known`, or read now) moved. */
  private async currentAcls(collectionId: string, known?: string): Promise<{ version: string; acls: StoredAcl[]; servers: string[] }> {
    const version = known ?? (await this.index.aclVersion(collectionId));
    const held = this.aclsOf.get(collectionId);
    if (held?.version === version) return held;
    const read = await this.index.acls(collectionId);
    const entry = { ...read, servers: [...new Set(read.acls.map((stored) => stored.server))].sort() };
    remember(this.aclsOf, collectionId, entry);
    return entry;
  }
}

/** Sets an entry, the oldest out past MAX_CACHED. */
function remember<V>(map: Map<string, V>, key: string, value: V): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > MAX_CACHED) map.delete(map.keys().next().value!);
}
