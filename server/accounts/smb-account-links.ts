/**
 * The SIDs a Sluice user holds on a file server (issue 33 item 3), from the Windows account they
 * linked there, and the re-resolution of every link's groups at each run of a permission source.
 */
import { EntityManager, type DataSource } from "typeorm";
import { SmbAccountLink } from "../data/entities/smb-account-link.entity";

export const EVERYONE_SID = "S-1-1-0";
export const AUTHENTICATED_USERS_SID = "S-1-5-11";

/** Links are kept per server: its name as the source names it, trimmed and lower-case. */
export function normaliseServer(name: string): string {
  return name.trim().toLowerCase();
}

function managerOf(db: DataSource | EntityManager): EntityManager {
  return db instanceof EntityManager ? db : db.manager;
}

/**
 * The person's SIDs for that server: the linked account's, its groups', Everyone and Authenticated
 * Users; with no link, only Everyone (they see what everyone may read). BUILTIN\Users comes with the
 * groups when the server puts the account in it (decision 0440).
 */
export async function sidsOfUser(db: DataSource | EntityManager, userId: string, server: string): Promise<string[]> {
  const link = await managerOf(db).findOne(SmbAccountLink, { where: { userId, server: normaliseServer(server) } });
  if (!link) return [EVERYONE_SID];
  return [...new Set([link.sid, ...link.groupSids, EVERYONE_SID, AUTHENTICATED_USERS_SID])];
}

/** What a run's connector offers for this (the SMB connector has both). */
export interface GroupResolver {
  resolveGroupSids?(sid: string): Promise<string[]>;
  groupNames?(sids: string[]): Promise<Array<{ sid: string; name: string }>>;
}

/**
 * Re-resolves the group SIDs of every account linked for `server`, with the source's own account
 * (the connector's), so a person taken out of a group loses its files at this run. An account
 * deleted on the server resolves to no groups (the connector's rule). Answers how many links changed.
 */
export async function refreshLinksOfServer(db: DataSource | EntityManager, connector: GroupResolver, server: string): Promise<number> {
  if (!connector.resolveGroupSids) return 0;
  const m = managerOf(db);
  const links = await m.find(SmbAccountLink, { where: { server: normaliseServer(server) } });
  let changed = 0;
  for (const link of links) {
    // A failure (the server gone) stops the refresh: the run fails as it would on listing, and links keep what was known.
    const groupSids = await connector.resolveGroupSids(link.sid);
    const known = new Map(link.groups.map((g) => [g.sid, g.name]));
    const unnamed = groupSids.filter((sid) => !known.has(sid));
    if (unnamed.length && connector.groupNames) for (const g of await connector.groupNames(unnamed)) known.set(g.sid, g.name);
    const groups = groupSids.map((sid) => ({ sid, name: known.get(sid) ?? sid }));
    const before = link.groupSidsJson;
    const after = JSON.stringify(groupSids);
    await m.update(SmbAccountLink, { id: link.id }, { groupSidsJson: after, groupNamesJson: JSON.stringify(groups), checkedAt: new Date() });
    if (before !== after) changed++;
  }
  return changed;
}
