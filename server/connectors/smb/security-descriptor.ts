/**
 * Self-relative security descriptors (MS-DTYP 2.4.6): owner, group and the DACL's ACEs, in the
 * shapes the index keeps (search/stored-acl.ts). Every
 * offset and size is checked against the buffer: a malformed descriptor throws, it never reads
 * past its end.
 */
import { sidString } from "./ndr";
import type { Ace, Dacl } from "../../search/stored-acl";

export interface SecurityDescriptor {
  owner: string | null;
  group: string | null;
  dacl: Dacl;
}

const SE_DACL_PRESENT = 0x0004;
const SE_SELF_RELATIVE = 0x8000;
const ACCESS_ALLOWED = 0x00;
const ACCESS_DENIED = 0x01;
const INHERIT_ONLY = 0x08;
const INHERITED = 0x10;
/** Object ACEs (allowed/denied/audit/alarm object, and their callback forms): Flags and up to two GUIDs come before the SID. */
const OBJECT_ACE_TYPES = new Set([0x05, 0x06, 0x07, 0x08, 0x0b, 0x0c, 0x0f, 0x10]);
const ACE_OBJECT_TYPE_PRESENT = 0x1;
const ACE_INHERITED_OBJECT_TYPE_PRESENT = 0x2;

export class SecurityDescriptorError extends Error {
  constructor(message: string) {
    super(`Malformed security descriptor: ${message}`);
    this.name = "SecurityDescriptorError";
  }
}

function sidAt(b: Buffer, off: number, end: number, what: string): string {
  try {
    const { sid, length } = sidString(b, off);
    if (off + length > end) throw new Error();
    return sid;
  } catch {
    throw new SecurityDescriptorError(`${what} SID at offset ${off}`);
  }
}

export function parseSecurityDescriptor(b: Buffer): SecurityDescriptor {
  if (b.length < 20) throw new SecurityDescriptorError(`${b.length} bytes, shorter than its header`);
  if (b.readUInt8(0) !== 1) throw new SecurityDescriptorError(`revision ${b.readUInt8(0)}`);
  const control = b.readUInt16LE(2);
  if (!(control & SE_SELF_RELATIVE)) throw new SecurityDescriptorError("not self-relative");
  const ownerOff = b.readUInt32LE(4);
  const groupOff = b.readUInt32LE(8);
  const daclOff = b.readUInt32LE(16);
  return {
    owner: ownerOff ? sidAt(b, ownerOff, b.length, "owner") : null,
    group: groupOff ? sidAt(b, groupOff, b.length, "group") : null,
    dacl: control & SE_DACL_PRESENT && daclOff ? parseAcl(b, daclOff) : null,
  };
}

/** An ACL (MS-DTYP 2.4.5) at `off`: its ACEs in order, INHERIT_ONLY ones left out (they do not apply to the object itself). */
export function parseAcl(b: Buffer, off: number): Ace[] {
  if (off + 8 > b.length) throw new SecurityDescriptorError(`an ACL at ${off} past the end`);
  const aclSize = b.readUInt16LE(off + 2);
  const count = b.readUInt16LE(off + 4);
  const end = off + aclSize;
  if (aclSize < 8 || end > b.length) throw new SecurityDescriptorError(`an ACL of ${aclSize} bytes at ${off}`);
  const aces: Ace[] = [];
  let p = off + 8;
  for (let i = 0; i < count; i++) {
    if (p + 8 > end) throw new SecurityDescriptorError(`ACE ${i} past the ACL's end`);
    const type = b.readUInt8(p);
    const flags = b.readUInt8(p + 1);
    const size = b.readUInt16LE(p + 2);
    if (size < 8 || p + size > end) throw new SecurityDescriptorError(`ACE ${i} of ${size} bytes`);
    const mask = b.readUInt32LE(p + 4);
    const kind = type === ACCESS_ALLOWED ? "allow" : type === ACCESS_DENIED ? "deny" : "other";
    let sidOff = p + 8;
    if (OBJECT_ACE_TYPES.has(type) && p + 12 <= p + size) {
      const objectFlags = b.readUInt32LE(p + 8);
      sidOff = p + 12 + (objectFlags & ACE_OBJECT_TYPE_PRESENT ? 16 : 0) + (objectFlags & ACE_INHERITED_OBJECT_TYPE_PRESENT ? 16 : 0);
    }
    // An ACE that grants nothing may name its SID oddly; only allow and deny must be well-formed.
    const sid = kind === "other" && sidOff + 8 > p + size ? "" : sidAt(b, sidOff, p + size, `ACE ${i}'s`);
    if (!(flags & INHERIT_ONLY)) aces.push({ kind, inherited: (flags & INHERITED) !== 0, mask, sid });
    p += size;
  }
  return aces;
}
