import type { Dacl, FileAcl } from "../search/stored-acl";

/**
 * Who may read one file of a source with the file server's permissions (issue 33 item 3),
 * decided as Windows decides for reading: each DACL walked in order, the first entry that
 * names one of the person's SIDs and mentions read decides; the file's and the share's must
 * both allow. The shapes (search/stored-acl.ts) are the contract with the SMB side (its descriptor parser).
 */

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
