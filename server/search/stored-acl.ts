import crypto from "node:crypto";

/**
 * An ACL as the index keeps it (issue 33 item 2): the shapes the SMB side's descriptor parser
 * gives, one normal text per distinct ACL, and the id documents store and searches filter on.
 * Who may read by them is decided in access/windows-acl.ts.
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
  /**
   * The file's owner (upper case), kept only where it can change who may read (the owner has
   * READ_CONTROL without an entry: access/windows-acl.ts, ownerWhereItDecides); absent or null otherwise.
   */
  owner?: string | null;
}

/**
 * One text per distinct ACL, what is stored and hashed: entries keep their order (it decides),
 * each with its fields in one order and its mask unsigned, SIDs upper-case.
 */
export function normaliseAcl(acl: FileAcl): string {
  const dacl = (entries: Dacl) => (entries === null ? null : entries.map((ace) => [ace.kind, ace.inherited, ace.mask >>> 0, ace.sid.toUpperCase()]));
  // No owner, no key: an ACL whose owner decides nothing keeps the text (and id) it had before owners were kept.
  const owner = acl.owner ? { owner: acl.owner.toUpperCase() } : {};
  return JSON.stringify({ file: dacl(acl.file), share: dacl(acl.share), ...owner });
}

/** The stored text back as an ACL. */
export function parseAcl(text: string): FileAcl {
  const stored = JSON.parse(text) as { file: Array<[Ace["kind"], boolean, number, string]> | null; share: Array<[Ace["kind"], boolean, number, string]> | null; owner?: string };
  const dacl = (entries: typeof stored.file): Dacl => (entries === null ? null : entries.map(([kind, inherited, mask, sid]) => ({ kind, inherited, mask, sid })));
  return { file: dacl(stored.file), share: dacl(stored.share), ...(stored.owner ? { owner: stored.owner } : {}) };
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
