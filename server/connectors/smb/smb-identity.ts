/** Who an SMB login is on its server, over IPC$: the account's SID (LSA), its groups (SAMR) and their names (LSA). */
import { LSARPC, closePolicy, lookupNames, lookupSids, openPolicy } from "./lsa";
import { SAMR, groupSidsOf } from "./samr";
import type { Smb2Client } from "./smb2-client";
import { parseSmbUsername } from "./smb-username";

export interface SmbAccountId {
  /** "DOMAIN\user" as the server names it. */
  account: string;
  sid: string;
}

export interface SmbIdentity extends SmbAccountId {
  groupSids: string[];
  groups: Array<{ sid: string; name: string }>;
}

/** SID_NAME_USE SidTypeUser. */
const SID_TYPE_USER = 1;

/**
 * The SID of the account a user name logs in as. The name as typed first (DOMAIN\user), then the
 * bare user (a standalone server names its accounts after itself, not after the workgroup).
 */
export function accountOf(client: Smb2Client, typed: string): Promise<SmbAccountId> {
  const { user } = parseSmbUsername(typed);
  const bare = user.includes("@") ? user.slice(0, user.indexOf("@")) : user;
  const candidates = [...new Set([typed.trim(), bare])];
  return client.withPipe("lsarpc", LSARPC, async (pipe) => {
    const policy = await openPolicy(pipe);
    try {
      for (const name of candidates) {
        const [found] = await lookupNames(pipe, policy, [name]);
        if (found && found.use === SID_TYPE_USER) return { account: found.name, sid: found.sid };
      }
      throw new Error(`The server has no account named ${typed}`);
    } finally {
      await closePolicy(pipe, policy);
    }
  });
}

export function groupSids(client: Smb2Client, serverName: string, sid: string): Promise<string[]> {
  return client.withPipe("samr", SAMR, (pipe) => groupSidsOf(pipe, serverName, sid));
}

export function groupNames(client: Smb2Client, sids: string[]): Promise<Array<{ sid: string; name: string }>> {
  if (sids.length === 0) return Promise.resolve([]);
  return client.withPipe("lsarpc", LSARPC, async (pipe) => {
    const policy = await openPolicy(pipe);
    try {
      return (await lookupSids(pipe, policy, sids)).map(({ sid, name }) => ({ sid, name }));
    } finally {
      await closePolicy(pipe, policy);
    }
  });
}
