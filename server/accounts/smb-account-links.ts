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

/** Linked accounts' groups as a file server answers them now, with the names of those groups. */
export interface LinkedGroups {
  /** Each account asked for (by SID) with its group SIDs; an account the server no longer has is in none. */
  accounts: Array<{ sid: string; groupSids: string[] }>;
  /** The groups' names ("DOMAIN\\name"), or the SID itself for one the server cannot name. */
  names: Array<{ sid: string; name: string }>;
}

/** Asks a file server, with a source's own account, for the groups of some linked accounts (the SMB check thread's threadGroupResolver). */
export interface GroupResolver {
  resolveGroups(sids: string[]): Promise<LinkedGroups>;
}

/**
 * Accounts per request to the resolver: one login and one deadline (SMB_CHECK_DEADLINE_S) per
 * batch, so a server with many linked accounts is neither asked once per account nor in one
 * request that no deadline can hold.
 */
export const LINKS_PER_REQUEST = 16;

/**
 * Re-resolves the group SIDs of every account linked for `server`, with the source's own account
 * (the resolver's), so a person taken out of a group loses its files at this run. An account
 * deleted on the server resolves to no groups. Answers how many links changed.
 */
export async function refreshLinksOfServer(db: DataSource | EntityManager, resolver: GroupResolver, server: string): Promise<number> {
  const m = managerOf(db);
  const links = await m.find(SmbAccountLink, { where: { server: normaliseServer(server) }, order: { id: "ASC" } });
  let changed = 0;
  for (let start = 0; start < links.length; start += LINKS_PER_REQUEST) {
    const batch = links.slice(start, start + LINKS_PER_REQUEST);
    // A failure (the server gone, the deadline) stops the refresh: the run fails as it would on listing, and links keep what was known.
    const answer = await resolver.resolveGroups(batch.map((link) => link.sid));
    const groupsOf = new Map(answer.accounts.map((a) => [a.sid, a.groupSids]));
    const named = new Map(answer.names.filter((g) => g.name !== g.sid).map((g) => [g.sid, g.name]));
    for (const link of batch) {
      const groupSids = groupsOf.get(link.sid);
      if (!groupSids) throw new Error(`The server's answer left out ${link.account}`);
      // A group the server cannot name now keeps the name it had.
      const known = new Map(link.groups.map((g) => [g.sid, g.name]));
      const groups = groupSids.map((sid) => ({ sid, name: named.get(sid) ?? known.get(sid) ?? sid }));
      const before = link.groupSidsJson;
      const after = JSON.stringify(groupSids);
      await m.update(SmbAccountLink, { id: link.id }, { groupSidsJson: after, groupNamesJson: JSON.stringify(groups), checkedAt: new Date() });
      if (before !== after) changed++;
    }
  }
  return changed;
}
