/**
 * NDR20 (C706 chapter 14, little-endian) as the LSA, SAMR and SRVSVC calls need it: aligned
 * integers, unique pointers, conformant varying strings, RPC_UNICODE_STRING, SIDs and 20-byte
 * context handles. The reader checks every length against the bytes it has, so a hostile reply
 * fails with an NdrError instead of reading past its end or looping.
 */

export class NdrError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "NdrError";
  }
}

/** Referent ids for unique pointers: any non-zero value, distinct within a message. */
let nextReferent = 0x00020000;
const referent = () => {
  nextReferent = nextReferent >= 0x7fff0000 ? 0x00020000 : nextReferent + 4;
  return nextReferent;
};

export class NdrWriter {
  private parts: Buffer[] = [];
  private len = 0;

  u16(v: number): this {
    this.align(2);
    const b = Buffer.alloc(2);
    b.writeUInt16LE(v & 0xffff, 0);
    return this.push(b);
  }

  u32(v: number): this {
    this.align(4);
    const b = Buffer.alloc(4);
    b.writeUInt32LE(v >>> 0, 0);
    return this.push(b);
  }

  /** A unique pointer's referent id (0: a null pointer); its pointee is written where NDR defers it. */
  pointer(present = true): this {
    return this.u32(present ? referent() : 0);
  }

  bytes(b: Buffer): this {
    return this.push(b);
  }

  /** A [string] wchar_t*: conformant varying UTF-16 with its terminating NUL. */
  wstring(s: string): this {
    const chars = s.length + 1;
    this.u32(chars).u32(0).u32(chars);
    return this.push(Buffer.from(`${s}\0`, "utf16le"));
  }

  /** The flat part of an RPC_UNICODE_STRING (Length, MaximumLength, Buffer pointer); the characters follow with unicodeChars. */
  unicodeHeader(s: string): this {
    const bytes = s.length * 2;
    return this.u16(bytes).u16(bytes).pointer(true);
  }

  /** The deferred characters of an RPC_UNICODE_STRING (no NUL). */
  unicodeChars(s: string): this {
    this.u32(s.length).u32(0).u32(s.length);
    return this.push(Buffer.from(s, "utf16le"));
  }

  /** An RPC_SID as a pointee: its conformance (SubAuthorityCount), then the SID. */
  sid(sid: string): this {
    const b = sidBytes(sid);
    return this.u32(b.readUInt8(1)).push(b);
  }

  handle(h: Buffer): this {
    if (h.length !== 20) throw new NdrError("A context handle is 20 bytes");
    this.align(4);
    return this.push(h);
  }

  done(): Buffer {
    return Buffer.concat(this.parts);
  }

  private align(n: number): void {
    const pad = (n - (this.len % n)) % n;
    if (pad) this.push(Buffer.alloc(pad));
  }

  private push(b: Buffer): this {
    this.parts.push(b);
    this.len += b.length;
    return this;
  }
}

/** At most this many elements in any one array a server sends (a count larger than the bytes could hold fails sooner). */
const MAX_ELEMENTS = 100_000;

export class NdrReader {
  off = 0;
  constructor(
    private readonly b: Buffer,
    private readonly what: string,
  ) {}

  u16(): number {
    this.align(2);
    this.need(2);
    const v = this.b.readUInt16LE(this.off);
    this.off += 2;
    return v;
  }

  u32(): number {
    this.align(4);
    this.need(4);
    const v = this.b.readUInt32LE(this.off);
    this.off += 4;
    return v;
  }

  u8(): number {
    this.need(1);
    return this.b.readUInt8(this.off++);
  }

  bytes(n: number): Buffer {
    this.need(n);
    const out = this.b.subarray(this.off, this.off + n);
    this.off += n;
    return out;
  }

  handle(): Buffer {
    this.align(4);
    return Buffer.from(this.bytes(20));
  }

  /** An array's conformance (max count), checked against a sane bound. */
  count(): number {
    const n = this.u32();
    if (n > MAX_ELEMENTS) throw new NdrError(`${this.what}: an array of ${n} elements`);
    return n;
  }

  /** A conformant varying UTF-16 string (a [string] wchar_t* or an RPC_UNICODE_STRING's characters). */
  wstring(): string {
    const max = this.u32();
    const offset = this.u32();
    const actual = this.u32();
    if (offset !== 0 || actual > max) throw new NdrError(`${this.what}: a malformed string (max ${max}, offset ${offset}, actual ${actual})`);
    return this.bytes(actual * 2).toString("utf16le").replace(/\0+$/, "");
  }

  /** An RPC_SID pointee: its conformance, then the SID; "" for the all-zero SID of an unmapped name. */
  sid(): string {
    const count = this.u32();
    if (count > 15) throw new NdrError(`${this.what}: a SID of ${count} sub-authorities`);
    const raw = this.bytes(8 + 4 * count);
    if (raw.readUInt8(1) !== count) throw new NdrError(`${this.what}: a SID whose count disagrees with its conformance`);
    // Samba answers an unmapped name with an all-zero SID: no SID at all.
    if (count === 0 && raw.every((byte) => byte === 0)) return "";
    return sidString(raw, 0).sid;
  }

  /** Skips to the next multiple of n (a struct whose alignment is larger than its first member's). */
  align(n: number): void {
    this.off = (this.off + n - 1) & ~(n - 1);
  }

  private need(n: number): void {
    if (this.off + n > this.b.length) throw new NdrError(`${this.what}: the reply ends ${this.off + n - this.b.length} bytes early`);
  }
}

/** A binary SID (MS-DTYP 2.4.2.2) at `off` as "S-1-5-21-...", and its length in bytes. */
export function sidString(b: Buffer, off: number): { sid: string; length: number } {
  if (off + 8 > b.length) throw new NdrError("A SID runs past its buffer");
  const revision = b.readUInt8(off);
  const count = b.readUInt8(off + 1);
  const length = 8 + 4 * count;
  if (revision !== 1 || count > 15 || off + length > b.length) throw new NdrError("A malformed SID");
  const authority = b.readUIntBE(off + 2, 6);
  const subs: number[] = [];
  for (let i = 0; i < count; i++) subs.push(b.readUInt32LE(off + 8 + 4 * i));
  return { sid: ["S", revision, authority, ...subs].join("-"), length };
}

export function sidBytes(sid: string): Buffer {
  const m = /^S-1-(\d+)((?:-\d+)*)$/i.exec(sid);
  if (!m) throw new NdrError(`Not a SID: ${sid}`);
  const subs = m[2] ? m[2].slice(1).split("-").map(Number) : [];
  if (subs.length > 15 || subs.some((s) => s > 0xffffffff)) throw new NdrError(`Not a SID: ${sid}`);
  const b = Buffer.alloc(8 + 4 * subs.length);
  b.writeUInt8(1, 0);
  b.writeUInt8(subs.length, 1);
  b.writeUIntBE(Number(m[1]), 2, 6);
  subs.forEach((s, i) => {
    b.writeUInt32LE(s, 8 + 4 * i);
  });
  return b;
}
