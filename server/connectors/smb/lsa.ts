/**
 * LSA (MS-LSAD / MS-LSAT) over the `lsarpc` pipe: LsarOpenPolicy2, LsarLookupNames3 (a name's
 * SID) and LsarLookupSids2 (SIDs' names), as `rpcclient lookupnames` and `lookupsids` call them.
 */
import type { RpcInterface, RpcPipe } from "./dcerpc";
import { NdrReader, NdrWriter } from "./ndr";
import { NtStatus, checkStatus } from "./rpc-status";

export const LSARPC: RpcInterface = { name: "lsarpc", uuid: "12345778-1234-abcd-ef00-0123456789ab", major: 0, minor: 0 };
const OPNUM = { CLOSE: 0, OPEN_POLICY2: 44, LOOKUP_SIDS2: 57, LOOKUP_NAMES3: 68 } as const;
const MAXIMUM_ALLOWED = 0x02000000;
/** LsapLookupWksta: the server looks in its own and its trusted domains, as a workstation would. */
const LOOKUP_LEVEL_WKSTA = 1;
const CLIENT_REVISION_2 = 2;
/** SIDs per LsarLookupSids2 call, so each request fits one fragment. */
const SIDS_PER_CALL = 64;

/** SID_NAME_USE (MS-LSAT 2.2.13): 1 user, 2 group, 4 alias, 5 well-known group, 8 unknown. */
export interface LookedUpName {
  sid: string;
  /** "DOMAIN\name" as the server names it; for a SID it does not know, the SID itself. */
  name: string;
  use: number;
}

export async function openPolicy(pipe: RpcPipe): Promise<Buffer> {
  const stub = new NdrWriter()
    .pointer(false) // SystemName
    .u32(24) // ObjectAttributes.Length; the rest is null
    .pointer(false)
    .pointer(false)
    .u32(0)
    .pointer(false)
    .pointer(false)
    .u32(MAXIMUM_ALLOWED);
  const r = new NdrReader(await pipe.call(OPNUM.OPEN_POLICY2, stub), "LsarOpenPolicy2");
  const handle = r.handle();
  checkStatus("LsarOpenPolicy2", r.u32());
  return handle;
}

export async function closePolicy(pipe: RpcPipe, handle: Buffer): Promise<void> {
  await pipe.call(OPNUM.CLOSE, new NdrWriter().handle(handle));
}

/** LSAPR_REFERENCED_DOMAIN_LIST: the domains the answer's DomainIndex values point into. */
function readReferencedDomains(r: NdrReader): Array<{ name: string; sid: string | null }> {
  if (r.u32() === 0) return [];
  const entries = r.u32();
  const domainsPtr = r.u32();
  r.u32(); // MaxEntries
  if (!domainsPtr) return [];
  const max = r.count();
  if (entries > max) throw new Error("LSA: more referenced domains than their array holds");
  const flat: Array<{ namePtr: number; sidPtr: number }> = [];
  for (let i = 0; i < max; i++) {
    r.u16();
    r.u16();
    flat.push({ namePtr: r.u32(), sidPtr: r.u32() });
  }
  return flat.map((f) => ({ name: f.namePtr ? r.wstring() : "", sid: f.sidPtr ? r.sid() : null })).slice(0, entries);
}

const qualified = (domains: Array<{ name: string }>, index: number, name: string) => {
  const domain = index >= 0 && index < domains.length ? domains[index].name : "";
  return domain ? `${domain}\\${name}` : name;
};

/** Each name's SID and the name as the server spells it; a name it does not know is left out. */
export async function lookupNames(pipe: RpcPipe, policy: Buffer, names: string[]): Promise<LookedUpName[]> {
  const w = new NdrWriter().handle(policy).u32(names.length).u32(names.length);
  for (const n of names) w.unicodeHeader(n);
  for (const n of names) w.unicodeChars(n);
  w.u32(0).pointer(false) // TranslatedSids: empty
    .u16(LOOKUP_LEVEL_WKSTA)
    .u32(0) // MappedCount
    .u32(0) // LookupOptions
    .u32(CLIENT_REVISION_2);
  const r = new NdrReader(await pipe.call(OPNUM.LOOKUP_NAMES3, w), "LsarLookupNames3");
  const domains = readReferencedDomains(r);
  const entries = r.u32();
  const sidsPtr = r.u32();
  const flat: Array<{ use: number; sidPtr: number; domainIndex: number }> = [];
  if (sidsPtr) {
    const max = r.count();
    if (entries > max || entries > names.length) throw new Error("LsarLookupNames3: more answers than names");
    for (let i = 0; i < max; i++) {
      const use = r.u16();
      flat.push({ use, sidPtr: r.u32(), domainIndex: r.u32() | 0 });
      r.u32(); // Flags
    }
  }
  const sids = flat.map((f) => (f.sidPtr ? r.sid() : null));
  r.u32(); // MappedCount
  const status = checkStatus("LsarLookupNames3", r.u32(), NtStatus.SOME_NOT_MAPPED, NtStatus.NONE_MAPPED);
  if (status === NtStatus.NONE_MAPPED) return [];
  const out: LookedUpName[] = [];
  flat.slice(0, entries).forEach((f, i) => {
    const sid = sids[i];
    if (!sid || f.use === 8) return;
    const bare = names[i].includes("\\") ? names[i].slice(names[i].indexOf("\\") + 1) : names[i];
    out.push({ sid, name: qualified(domains, f.domainIndex, bare), use: f.use });
  });
  return out;
}

/** Names of SIDs ("DOMAIN\name"); a SID the server cannot name keeps the SID as its name. */
export async function lookupSids(pipe: RpcPipe, policy: Buffer, sids: string[]): Promise<LookedUpName[]> {
  const out: LookedUpName[] = [];
  for (let start = 0; start < sids.length; start += SIDS_PER_CALL) {
    out.push(...(await lookupSidsOnce(pipe, policy, sids.slice(start, start + SIDS_PER_CALL))));
  }
  return out;
}

async function lookupSidsOnce(pipe: RpcPipe, policy: Buffer, sids: string[]): Promise<LookedUpName[]> {
  const w = new NdrWriter().handle(policy).u32(sids.length).pointer(sids.length > 0);
  if (sids.length) {
    w.u32(sids.length);
    for (const _ of sids) w.pointer();
    for (const s of sids) w.sid(s);
  }
  w.u32(0).pointer(false) // TranslatedNames: empty
    .u16(LOOKUP_LEVEL_WKSTA)
    .u32(0)
    .u32(0)
    .u32(CLIENT_REVISION_2);
  const r = new NdrReader(await pipe.call(OPNUM.LOOKUP_SIDS2, w), "LsarLookupSids2");
  const domains = readReferencedDomains(r);
  const entries = r.u32();
  const namesPtr = r.u32();
  const flat: Array<{ use: number; namePtr: number; domainIndex: number }> = [];
  if (namesPtr) {
    const max = r.count();
    if (entries > max || entries > sids.length) throw new Error("LsarLookupSids2: more answers than SIDs");
    for (let i = 0; i < max; i++) {
      const use = r.u16();
      r.align(4);
      r.u16();
      r.u16();
      flat.push({ use, namePtr: r.u32(), domainIndex: r.u32() | 0 });
      r.u32(); // Flags
    }
  }
  const names = flat.map((f) => (f.namePtr ? r.wstring() : ""));
  r.u32(); // MappedCount
  const status = checkStatus("LsarLookupSids2", r.u32(), NtStatus.SOME_NOT_MAPPED, NtStatus.NONE_MAPPED);
  return sids.map((sid, i) => {
    const f = flat[i];
    if (status === NtStatus.NONE_MAPPED || !f || i >= entries || f.use === 8 || !names[i]) return { sid, name: sid, use: 8 };
    return { sid, name: qualified(domains, f.domainIndex, names[i]), use: f.use };
  });
}
