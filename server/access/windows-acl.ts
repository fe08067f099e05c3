import crypto from "node:crypto";

/**
 * Who may read one file of a source with the file server's permissions (issue 33 item 3),
 * decided as Windows decides for reading: each DACL walked in order, the first entry that
 * names one of the person's SIDs and mentions read decides; the file's and the share's must
 * both allow. The shapes are the contract with the SMB side (its descriptor parser).
 */

export interface Ace {
  kind: "allow" | "deny" | "other";
  inherited: boolean;
  mask: number;
  sid: string;
}
/** null: a NULL DACL (everyone may read); []: an empty DACL (no one may). */
export type Dacl = Ace[] | null;
/** What decides who may read one file: its own DACL and its share's. */
export interface FileAcl {
  file: Dacl;
  share: Dacl;
}

export const FILE_READ_DATA = 0x1;
export const GENERIC_ALL = 0x10000000;
export const GENERIC_READ = 0x80000000;
/** The mask bits that mention reading a file's content (MAXIMUM_ALLOWED, 0x02000000, asks rather than grants). */
const READ_BITS = FILE_READ_DATA | GENERIC_READ | GENERIC_ALL;

/** Everyone: the only SID of a person with no linked account for the server. */
export const EVERYONE_SID = "S-1-1-0";

function mentionsRead(mask: number): boolean {
  // >>> 0: GENERIC_READ is bit 31, which JavaScript's & answers as a negative number.
  return ((mask & READ_BITS) >>> 0) !== 0;
}

/** One DACL's answer: its first entry naming one of `sids` and mentioning read decides. */
export function daclAllowsRead(dacl: Dacl, sids: ReadonlySet<string>): boolean {
  if (dacl === null) return true;
  for (const ace of dacl) {
    // Object and callback entries never grant here, and a deny of those kinds is not this file's to apply either.
    if (ace.kind === "other" || !sids.has(ace.sid) || !mentionsRead(ace.mask)) continue;
    return ace.kind === "allow";
  }
  return false;
}

/** Whether a person holding `sids` may read the file: its DACL and its share's both allow. */
export function mayRead(acl: FileAcl, sids: ReadonlySet<string>): boolean {
  return daclAllowsRead(acl.share, sids) && daclAllowsRead(acl.file, sids);
}

/**
 * One text per distinct ACL, what is stored and hashed: entries keep their order (it decides),
 * each with its fields in one order and its mask unsigned, SIDs upper-case.
 */
export function normaliseAcl(acl: FileAcl): string {
  const dacl = (entries: Dacl) => (entries === null ? null : entries.map((ace) => [ace.kind, ace.inherited, ace.mask >>> 0, ace.sid.toUpperCase()]));
  return JSON.stringify({ file: dacl(acl.file), share: dacl(acl.share) });
}

/** The stored text back as an ACL. */
export function parseAcl(text: string): FileAcl {
  const stored = JSON.parse(text) as { file: Array<[Ace["kind"], boolean, number, string]> | null; share: Array<[Ace["kind"], boolean, number, string]> | null };
  const dacl = (entries: typeof stored.file): Dacl => (entries === null ? null : entries.map(([kind, inherited, mask, sid]) => ({ kind, inherited, mask, sid })));
  return { file: dacl(stored.file), share: dacl(stored.share) };
}

/** The key of one distinct ACL within a collection: the server it came from (whose SIDs it names) and its normal form. */
export function aclHash(server: string, normalised: string): string {
  return crypto.createHash("sha256").update(server).update("\u0000").update(normalised).digest("hex");
}

/** Hex digits of the hash kept as an ACL's id (what documents store and searches filter on): 128 bits. */
const ID_HEX = 32;

/** The stored id of an ACL read from `server`. */
export function aclIdOf(server: string, acl: FileAcl): string {
  return aclHash(server, normaliseAcl(acl)).slice(0, ID_HEX);
}
