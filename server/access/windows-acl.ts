import type { Dacl, FileAcl } from "../search/stored-acl";

/**
 * Who may read one file of a source with the file server's permissions (issue 33 item 3),
 * decided as the server decides a client's open for reading (decision 0480): the access such an
 * open asks for must be granted, entries walked in order (MS-DTYP 2.5.3.2, Samba's
 * se_access_check): an allow grants its bits, a deny of a bit not yet granted refuses, bits left
 * at the end refuse. The file's DACL and its share's must both grant it. The shapes
 * (search/stored-acl.ts) are the contract with the SMB side (its descriptor parser).
 */

export const FILE_READ_DATA = 0x1;
const FILE_READ_EA = 0x8;
const FILE_READ_ATTRIBUTES = 0x80;
export const READ_CONTROL = 0x20000;
const SYNCHRONIZE = 0x100000;
export const GENERIC_ALL = 0x10000000;
const GENERIC_EXECUTE = 0x20000000;
const GENERIC_WRITE = 0x40000000;
export const GENERIC_READ = 0x80000000;

/** What a client's open for reading asks for (GENERIC_READ mapped for a file: FILE_GENERIC_READ), as smbclient and Explorer ask. */
const FILE_GENERIC_READ = FILE_READ_DATA | FILE_READ_EA | FILE_READ_ATTRIBUTES | READ_CONTROL | SYNCHRONIZE;
/**
 * What the file's DACL must grant: FILE_READ_ATTRIBUTES comes with the path (MS-FSA: from the
 * folder's listing right; Samba never asks the file's DACL for it), measured against Samba 4.17.
 */
export const FILE_READ_NEEDS = FILE_GENERIC_READ & ~FILE_READ_ATTRIBUTES;
/** What the share's permissions must grant: the whole open (Samba masks it with the share's maximum access). */
export const SHARE_READ_NEEDS = FILE_GENERIC_READ;

/** The file generic mapping (MS-DTYP 2.4.3 / Windows' FILE_GENERIC_*): generic bits in an entry stand for these. */
const GENERIC_MAP: Array<[number, number]> = [
  [GENERIC_READ, FILE_GENERIC_READ],
  [GENERIC_WRITE, 0x120116],
  [GENERIC_EXECUTE, 0x1200a0],
  [GENERIC_ALL, 0x1f01ff],
];

/** Everyone: the only SID of a person with no linked account for the server. */
export const EVERYONE_SID = "S-1-1-0";
/** OWNER RIGHTS: an entry for it replaces the rights a file's owner has without asking (READ_CONTROL, WRITE_DAC). */
export const OWNER_RIGHTS_SID = "S-1-3-4";

function mapped(mask: number): number {
  let out = mask >>> 0;
  for (const [generic, specific] of GENERIC_MAP) if ((mask & generic) >>> 0 !== 0) out |= specific;
  return out >>> 0;
}

/**
 * Whether `dacl` grants all of `needs` to a person holding `sids`. `owner`: the object's owner,
 * who has READ_CONTROL without an entry unless the DACL has an OWNER RIGHTS entry, which then
 * applies to the owner instead.
 */
export function daclGrants(dacl: Dacl, sids: ReadonlySet<string>, needs: number, owner: string | null = null): boolean {
  if (dacl === null) return true;
  const isOwner = owner !== null && sids.has(owner.toUpperCase());
  const ownerRightsEntry = dacl.some((ace) => ace.kind !== "other" && ace.sid.toUpperCase() === OWNER_RIGHTS_SID);
  let remaining = needs >>> 0;
  if (isOwner && !ownerRightsEntry) remaining = (remaining & ~READ_CONTROL) >>> 0;
  const applies = (sid: string) => sids.has(sid.toUpperCase()) || (isOwner && sid.toUpperCase() === OWNER_RIGHTS_SID);
  for (const ace of dacl) {
    if (remaining === 0) break;
    // Object and callback entries are not a file's: they neither grant nor refuse here.
    if (ace.kind === "other" || !applies(ace.sid)) continue;
    const mask = mapped(ace.mask);
    if (ace.kind === "allow") remaining = (remaining & ~mask) >>> 0;
    else if ((remaining & mask) >>> 0 !== 0) return false;
  }
  return remaining === 0;
}

/** Whether a person holding `sids` may read the file: its DACL and its share's both grant the open. */
export function mayRead(acl: FileAcl, sids: ReadonlySet<string>): boolean {
  return daclGrants(acl.share, sids, SHARE_READ_NEEDS) && daclGrants(acl.file, sids, FILE_READ_NEEDS, acl.owner ?? null);
}

/**
 * The file's owner where it can change the answer for someone, else null, so the stored ACL (and
 * its id) names an owner only then and files differing only in an owner that decides nothing share
 * one ACL. It can only when the DACL exists, has no OWNER RIGHTS entry, and either an allow entry
 * grants FILE_READ_DATA without READ_CONTROL (the owner's own READ_CONTROL may complete a read) or a
 * deny mentions READ_CONTROL (the owner's is granted before that deny is met). Otherwise whoever is
 * granted FILE_READ_DATA gets READ_CONTROL in the same entry, and no deny can hinge on it.
 */
export function ownerWhereItDecides(dacl: Dacl, owner: string | null): string | null {
  if (owner === null || dacl === null) return null;
  if (dacl.some((ace) => ace.kind !== "other" && ace.sid.toUpperCase() === OWNER_RIGHTS_SID)) return null;
  const decides = dacl.some((ace) => {
    const mask = mapped(ace.mask);
    if (ace.kind === "allow") return (mask & FILE_READ_DATA) !== 0 && (mask & READ_CONTROL) === 0;
    return ace.kind === "deny" && (mask & READ_CONTROL) !== 0;
  });
  return decides ? owner.toUpperCase() : null;
}
