/**
 * Share enumeration: DCE/RPC (connection-oriented, NDR20, no auth) over the
 * `srvsvc` named pipe, calling NetrShareEnum (MS-SRVS 3.1.4.8) at level 1.
 * No npm package does this; it is what `smbclient -L` and Explorer do.
 */

const PTYPE = { REQUEST: 0, RESPONSE: 2, FAULT: 3, BIND: 11, BIND_ACK: 12, BIND_NAK: 13 } as const;
const PFC_FIRST_LAST = 0x03;
const PFC_LAST = 0x02;
const MAX_FRAG = 4280;
const OPNUM_NETR_SHARE_ENUM = 15;

/** The first three UUID fields are little-endian on the wire, the rest as written. */
function uuid(s: string): Buffer {
  const h = s.replace(/-/g, "");
  const b = Buffer.from(h, "hex");
  b.subarray(0, 4).reverse();
  b.subarray(4, 6).reverse();
  b.subarray(6, 8).reverse();
  return b;
}

const SRVSVC = { uuid: uuid("4b324fc8-1670-01d3-1278-5a47bf6ee188"), major: 3, minor: 0 };
const NDR20 = { uuid: uuid("8a885d04-1ceb-11c9-9fe8-08002b104860"), version: 2 };

function pduHeader(ptype: number, fragLength: number, callId: number): Buffer {
  const b = Buffer.alloc(16);
  b.writeUInt8(5, 0);
  b.writeUInt8(0, 1);
  b.writeUInt8(ptype, 2);
  b.writeUInt8(PFC_FIRST_LAST, 3);
  b.writeUInt32BE(0x10000000, 4); // data representation: little-endian, ASCII, IEEE
  b.writeUInt16LE(fragLength, 8);
  b.writeUInt16LE(0, 10);
  b.writeUInt32LE(callId, 12);
  return b;
}

export function bindPdu(callId: number): Buffer {
  const body = Buffer.alloc(56);
  body.writeUInt16LE(MAX_FRAG, 0);
  body.writeUInt16LE(MAX_FRAG, 2);
  body.writeUInt32LE(0, 4); // assoc_group_id
  body.writeUInt8(1, 8); // one presentation context
  body.writeUInt16LE(0, 12); // context id
  body.writeUInt8(1, 14); // one transfer syntax
  SRVSVC.uuid.copy(body, 16);
  body.writeUInt16LE(SRVSVC.major, 32);
  body.writeUInt16LE(SRVSVC.minor, 34);
  NDR20.uuid.copy(body, 36);
  body.writeUInt32LE(NDR20.version, 52);
  return Buffer.concat([pduHeader(PTYPE.BIND, 16 + body.length, callId), body]);
}

export function checkBindAck(pdu: Buffer): void {
  const ptype = pdu.readUInt8(2);
  if (ptype !== PTYPE.BIND_ACK) throw new Error(`srvsvc bind refused (PDU type ${ptype})`);
  const secAddrLen = pdu.readUInt16LE(24);
  let off = 26 + secAddrLen;
  off = (off + 3) & ~3;
  const results = pdu.readUInt8(off);
  const result = pdu.readUInt16LE(off + 4);
  if (results < 1 || result !== 0) throw new Error(`srvsvc bind: presentation context rejected (${result})`);
}

class NdrWriter {
  private parts: Buffer[] = [];
  private len = 0;
  u32(v: number): this {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(v >>> 0, 0);
    return this.push(b);
  }
  /** A conformant varying UTF-16 string with its terminating NUL, padded to 4. */
  wstring(s: string): this {
    const chars = s.length + 1;
    this.u32(chars).u32(0).u32(chars);
    this.push(Buffer.from(`${s}\0`, "utf16le"));
    return this.align4();
  }
  private align4(): this {
    const pad = (4 - (this.len % 4)) % 4;
    return pad ? this.push(Buffer.alloc(pad)) : this;
  }
  private push(b: Buffer): this {
    this.parts.push(b);
    this.len += b.length;
    return this;
  }
  done(): Buffer {
    return Buffer.concat(this.parts);
  }
}

export function netrShareEnumPdu(callId: number, serverName: string): Buffer {
  const stub = new NdrWriter()
    .u32(0x00020000) // ServerName: unique pointer referent
    .wstring(`\\\\${serverName}`)
    .u32(1) // InfoStruct.Level
    .u32(1) // union discriminant
    .u32(0x00020004) // pointer to SHARE_INFO_1_CONTAINER
    .u32(0) // EntriesRead
    .u32(0) // Buffer: null, the server allocates
    .u32(0xffffffff) // PreferedMaximumLength: everything
    .u32(0x00020008) // ResumeHandle: unique pointer
    .u32(0)
    .done();
  const req = Buffer.alloc(8);
  req.writeUInt32LE(stub.length, 0); // alloc_hint
  req.writeUInt16LE(0, 4); // context id
  req.writeUInt16LE(OPNUM_NETR_SHARE_ENUM, 6);
  return Buffer.concat([pduHeader(PTYPE.REQUEST, 16 + 8 + stub.length, callId), req, stub]);
}

/**
 * Reassembles a (possibly fragmented) response. Returns the stub data once the
 * last fragment is in, or undefined when more bytes must be read from the pipe.
 */
export function reassembleResponse(data: Buffer): Buffer | undefined {
  const stubs: Buffer[] = [];
  for (let off = 0; off + 16 <= data.length; ) {
    const ptype = data.readUInt8(off + 2);
    const flags = data.readUInt8(off + 3);
    const fragLen = data.readUInt16LE(off + 8);
    const authLen = data.readUInt16LE(off + 10);
    // A fragment shorter than its headers would never move `off` on (issue 34: an endless loop).
    if (fragLen < 24) throw new Error(`srvsvc: a DCE/RPC fragment of ${fragLen} bytes, shorter than its header`);
    if (off + fragLen > data.length) return undefined;
    if (ptype === PTYPE.FAULT) {
      throw new Error(`srvsvc call failed: DCE/RPC fault 0x${data.readUInt32LE(off + 24).toString(16)}`);
    }
    if (ptype !== PTYPE.RESPONSE) throw new Error(`srvsvc: unexpected PDU type ${ptype}`);
    const authTrailer = authLen ? authLen + 8 : 0;
    stubs.push(data.subarray(off + 24, off + fragLen - authTrailer));
    if (flags & PFC_LAST) return Buffer.concat(stubs);
    off += fragLen;
  }
  return undefined;
}

class NdrReader {
  off = 0;
  constructor(private readonly b: Buffer) {}
  u32(): number {
    this.off = (this.off + 3) & ~3;
    const v = this.b.readUInt32LE(this.off);
    this.off += 4;
    return v;
  }
  wstring(): string {
    this.u32(); // max count
    this.u32(); // offset
    const actual = this.u32();
    const s = this.b.toString("utf16le", this.off, this.off + actual * 2);
    this.off += actual * 2;
    return s.replace(/\0+$/, "");
  }
}

export interface ShareInfo {
  name: string;
  /** STYPE_*: 0 disk, 1 printer, 2 device, 3 IPC; 0x80000000 marks admin shares. */
  type: number;
  comment: string;
}

export function parseNetrShareEnum(stub: Buffer): ShareInfo[] {
  const r = new NdrReader(stub);
  const level = r.u32();
  r.u32(); // union discriminant
  if (level !== 1) throw new Error(`srvsvc: unexpected info level ${level}`);
  const containerPtr = r.u32();
  const shares: ShareInfo[] = [];
  if (containerPtr !== 0) {
    const count = r.u32();
    const arrayPtr = r.u32();
    if (arrayPtr !== 0) {
      const max = r.u32();
      const fixed: Array<{ namePtr: number; type: number; commentPtr: number }> = [];
      for (let i = 0; i < max; i++) fixed.push({ namePtr: r.u32(), type: r.u32(), commentPtr: r.u32() });
      // Pointed-to strings follow the array, in order, skipping null pointers.
      for (const f of fixed.slice(0, count)) {
        const name = f.namePtr ? r.wstring() : "";
        const comment = f.commentPtr ? r.wstring() : "";
        shares.push({ name, type: f.type, comment });
      }
    }
  }
  r.u32(); // TotalEntries
  if (r.u32() !== 0) r.u32(); // ResumeHandle
  const werror = r.u32();
  if (werror !== 0) throw new Error(`NetrShareEnum failed: WERROR 0x${werror.toString(16)}`);
  return shares;
}
