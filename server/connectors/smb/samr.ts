/**
 * SAMR (MS-SAMR) over the `samr` pipe: an account's groups as the server sees them now, the way
 * `rpcclient queryusergroups` and `queryuseraliases` ask: SamrConnect5, SamrOpenDomain (the
 * account's domain and BUILTIN), SamrOpenUser, SamrGetGroupsForUser, SamrGetAliasMembership.
 */
import type { RpcInterface, RpcPipe } from "./dcerpc";
import { NdrReader, NdrWriter } from "./ndr";
import { checkStatus } from "./rpc-status";

// Every network logon holds these two; aliases may have them as members.
const EVERYONE = "S-1-1-0";
const AUTHENTICATED_USERS = "S-1-5-11";

export const SAMR: RpcInterface = { name: "samr", uuid: "12345778-1234-abcd-ef00-0123456789ac", major: 1, minor: 0 };
const OPNUM = { CLOSE: 1, LOOKUP_DOMAIN: 5, OPEN_DOMAIN: 7, GET_ALIAS_MEMBERSHIP: 16, OPEN_USER: 34, GET_GROUPS_FOR_USER: 39, CONNECT5: 64 } as const;
const MAXIMUM_ALLOWED = 0x02000000;
export const BUILTIN_DOMAIN_SID = "S-1-5-32";

async function handleCall(pipe: RpcPipe, call: string, opnum: number, stub: NdrWriter): Promise<Buffer> {
  const r = new NdrReader(await pipe.call(opnum, stub), call);
  const handle = r.handle();
  checkStatus(call, r.u32());
  return handle;
}

export async function connect5(pipe: RpcPipe, serverName: string): Promise<Buffer> {
  const stub = new NdrWriter()
    .pointer()
    .wstring(`\\\\${serverName}`)
    .u32(MAXIMUM_ALLOWED)
    .u32(1) // InVersion
    .u32(1) // union discriminant
    .u32(3) // SAMPR_REVISION_INFO_V1.Revision
    .u32(0); // SupportedFeatures
  const r = new NdrReader(await pipe.call(OPNUM.CONNECT5, stub), "SamrConnect5");
  r.u32(); // OutVersion
  r.u32(); // union discriminant
  r.u32();
  r.u32();
  const handle = r.handle();
  checkStatus("SamrConnect5", r.u32());
  return handle;
}

/** The SID of a domain the server holds, by name (its own account domain or "Builtin"). */
export async function lookupDomain(pipe: RpcPipe, server: Buffer, name: string): Promise<string> {
  const w = new NdrWriter().handle(server).unicodeHeader(name).unicodeChars(name);
  const r = new NdrReader(await pipe.call(OPNUM.LOOKUP_DOMAIN, w), "SamrLookupDomainInSamServer");
  const sid = r.u32() ? r.sid() : null;
  checkStatus("SamrLookupDomainInSamServer", r.u32());
  if (!sid) throw new Error(`SamrLookupDomainInSamServer: no SID for ${name}`);
  return sid;
}

export function openDomain(pipe: RpcPipe, server: Buffer, domainSid: string): Promise<Buffer> {
  return handleCall(pipe, "SamrOpenDomain", OPNUM.OPEN_DOMAIN, new NdrWriter().handle(server).u32(MAXIMUM_ALLOWED).sid(domainSid));
}

export function openUser(pipe: RpcPipe, domain: Buffer, rid: number): Promise<Buffer> {
  return handleCall(pipe, "SamrOpenUser", OPNUM.OPEN_USER, new NdrWriter().handle(domain).u32(MAXIMUM_ALLOWED).u32(rid));
}

export async function closeHandle(pipe: RpcPipe, handle: Buffer): Promise<void> {
  await pipe.call(OPNUM.CLOSE, new NdrWriter().handle(handle));
}

/** RIDs of the domain groups the user is a member of (its primary group included). */
export async function groupsForUser(pipe: RpcPipe, user: Buffer): Promise<number[]> {
  const r = new NdrReader(await pipe.call(OPNUM.GET_GROUPS_FOR_USER, new NdrWriter().handle(user)), "SamrGetGroupsForUser");
  const rids: number[] = [];
  if (r.u32()) {
    const count = r.u32();
    if (r.u32()) {
      const max = r.count();
      if (count > max) throw new Error("SamrGetGroupsForUser: more groups than the array holds");
      for (let i = 0; i < max; i++) {
        const rid = r.u32();
        r.u32(); // Attributes
        if (i < count) rids.push(rid);
      }
    }
  }
  checkStatus("SamrGetGroupsForUser", r.u32());
  return rids;
}

/** RIDs of the domain's aliases (local groups) any of these SIDs belongs to. */
export async function aliasMembership(pipe: RpcPipe, domain: Buffer, sids: string[]): Promise<number[]> {
  const w = new NdrWriter().handle(domain).u32(sids.length).pointer(sids.length > 0);
  if (sids.length) {
    w.u32(sids.length);
    for (const _ of sids) w.pointer();
    for (const s of sids) w.sid(s);
  }
  const r = new NdrReader(await pipe.call(OPNUM.GET_ALIAS_MEMBERSHIP, w), "SamrGetAliasMembership");
  const count = r.u32();
  const rids: number[] = [];
  if (r.u32()) {
    const max = r.count();
    if (count > max) throw new Error("SamrGetAliasMembership: more aliases than the array holds");
    for (let i = 0; i < max; i++) {
      const rid = r.u32();
      if (i < count) rids.push(rid);
    }
  }
  checkStatus("SamrGetAliasMembership", r.u32());
  return rids;
}

/** The domain part of an account SID and its RID: S-1-5-21-a-b-c-1001 -> S-1-5-21-a-b-c, 1001. */
export function splitSid(sid: string): { domain: string; rid: number } {
  const at = sid.lastIndexOf("-");
  return { domain: sid.slice(0, at), rid: Number(sid.slice(at + 1)) };
}

/**
 * Every group SID of the account now: its domain groups (primary included), then the aliases of
 * its domain and of BUILTIN that it, those groups, Everyone or Authenticated Users belong to (so
 * BUILTIN\Users where the server's Users holds Authenticated Users, as Windows does). Sorted, without repeats.
 */
export async function groupSidsOf(pipe: RpcPipe, serverName: string, userSid: string): Promise<string[]> {
  const { domain: domainSid, rid } = splitSid(userSid);
  const server = await connect5(pipe, serverName);
  const domain = await openDomain(pipe, server, domainSid);
  const user = await openUser(pipe, domain, rid);
  const groups = (await groupsForUser(pipe, user)).map((g) => `${domainSid}-${g}`);
  await closeHandle(pipe, user);
  const members = [userSid, ...groups, EVERYONE, AUTHENTICATED_USERS];
  const aliases = (await aliasMembership(pipe, domain, members)).map((a) => `${domainSid}-${a}`);
  const builtin = await openDomain(pipe, server, BUILTIN_DOMAIN_SID);
  const builtinAliases = (await aliasMembership(pipe, builtin, members)).map((a) => `${BUILTIN_DOMAIN_SID}-${a}`);
  for (const h of [builtin, domain, server]) await closeHandle(pipe, h);
  return [...new Set([...groups, ...aliases, ...builtinAliases])].sort();
}
