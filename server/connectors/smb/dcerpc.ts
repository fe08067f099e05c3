/**
 * Connection-oriented DCE/RPC (C706 chapter 12; MS-RPCE 2.2.2) over an SMB named pipe, without
 * authentication and with NDR20: bind, one request and its (possibly fragmented) reply. Every loop
 * the server drives is bounded: a fragment shorter than its header, a reply over `maxReplyBytes` or
 * more pipe reads than `maxPipeReads` fail at once with a DceRpcError.
 */
import { NdrWriter } from "./ndr";

const PTYPE = { REQUEST: 0, RESPONSE: 2, FAULT: 3, BIND: 11, BIND_ACK: 12, BIND_NAK: 13 } as const;
const PFC_FIRST = 0x01;
const PFC_LAST = 0x02;
const HEADER = 16;
const REQUEST_HEADER = 24;
/** What we offer for both directions; servers answer with at most this (Samba: 4280). */
const MAX_FRAG = 4280;

export const DEFAULT_MAX_REPLY_BYTES = 4 * 1024 * 1024;
export const DEFAULT_MAX_PIPE_READS = 4096;

/** The server broke the DCE/RPC rules or a bound: the call is abandoned, nothing from it is used. */
export class DceRpcError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DceRpcError";
  }
}

/** The server answered the call with a fault PDU (e.g. 0x1c010002 nca_op_rng_error). */
export class DceRpcFault extends DceRpcError {
  constructor(
    readonly iface: string,
    readonly status: number,
  ) {
    super(`${iface} call failed: DCE/RPC fault 0x${status.toString(16).padStart(8, "0")}`);
    this.name = "DceRpcFault";
  }
}

/** How PDUs reach the pipe: a write-and-read (FSCTL_PIPE_TRANSCEIVE) and further reads of a long reply. */
export interface PipeTransport {
  transceive(pdu: Buffer): Promise<Buffer>;
  read(): Promise<Buffer>;
}

export interface RpcInterface {
  /** A name for messages: "srvsvc", "lsarpc", "samr". */
  name: string;
  uuid: string;
  major: number;
  minor: number;
}

export interface RpcLimits {
  maxReplyBytes?: number;
  maxPipeReads?: number;
}

/** The first three UUID fields are little-endian on the wire, the rest as written. */
export function uuidBytes(s: string): Buffer {
  const b = Buffer.from(s.replace(/-/g, ""), "hex");
  b.subarray(0, 4).reverse();
  b.subarray(4, 6).reverse();
  b.subarray(6, 8).reverse();
  return b;
}

const NDR20 = { uuid: uuidBytes("8a885d04-1ceb-11c9-9fe8-08002b104860"), version: 2 };

function pduHeader(ptype: number, flags: number, fragLength: number, callId: number): Buffer {
  const b = Buffer.alloc(HEADER);
  b.writeUInt8(5, 0);
  b.writeUInt8(0, 1);
  b.writeUInt8(ptype, 2);
  b.writeUInt8(flags, 3);
  b.writeUInt32BE(0x10000000, 4); // data representation: little-endian, ASCII, IEEE
  b.writeUInt16LE(fragLength, 8);
  b.writeUInt16LE(0, 10);
  b.writeUInt32LE(callId, 12);
  return b;
}

export function bindPdu(iface: RpcInterface, callId: number): Buffer {
  const body = Buffer.alloc(56);
  body.writeUInt16LE(MAX_FRAG, 0);
  body.writeUInt16LE(MAX_FRAG, 2);
  body.writeUInt32LE(0, 4); // assoc_group_id
  body.writeUInt8(1, 8); // one presentation context
  body.writeUInt16LE(0, 12); // context id
  body.writeUInt8(1, 14); // one transfer syntax
  uuidBytes(iface.uuid).copy(body, 16);
  body.writeUInt16LE(iface.major, 32);
  body.writeUInt16LE(iface.minor, 34);
  NDR20.uuid.copy(body, 36);
  body.writeUInt32LE(NDR20.version, 52);
  return Buffer.concat([pduHeader(PTYPE.BIND, PFC_FIRST | PFC_LAST, HEADER + body.length, callId), body]);
}

/** Checks a BIND_ACK accepted our one context; answers the server's max_recv_frag (the largest request fragment it takes). */
export function checkBindAck(iface: RpcInterface, pdu: Buffer): number {
  if (pdu.length < HEADER) throw new DceRpcError(`${iface.name} bind: a reply of ${pdu.length} bytes, shorter than a PDU header`);
  const ptype = pdu.readUInt8(2);
  if (ptype !== PTYPE.BIND_ACK) throw new DceRpcError(`${iface.name} bind refused (PDU type ${ptype})`);
  if (pdu.length < 28) throw new DceRpcError(`${iface.name} bind: a truncated BIND_ACK`);
  const maxRecv = pdu.readUInt16LE(18);
  const secAddrLen = pdu.readUInt16LE(24);
  const off = (26 + secAddrLen + 3) & ~3;
  if (off + 8 > pdu.length) throw new DceRpcError(`${iface.name} bind: a truncated BIND_ACK`);
  const results = pdu.readUInt8(off);
  const result = pdu.readUInt16LE(off + 4);
  if (results < 1 || result !== 0) throw new DceRpcError(`${iface.name} bind: presentation context rejected (${result})`);
  return maxRecv;
}

export function requestPdu(callId: number, opnum: number, stub: Buffer): Buffer {
  const req = Buffer.alloc(8);
  req.writeUInt32LE(stub.length, 0); // alloc_hint
  req.writeUInt16LE(0, 4); // context id
  req.writeUInt16LE(opnum, 6);
  return Buffer.concat([pduHeader(PTYPE.REQUEST, PFC_FIRST | PFC_LAST, REQUEST_HEADER + stub.length, callId), req, stub]);
}

/**
 * Collects the fragments of one reply as bytes come from the pipe. `push` answers the stub once
 * the last fragment is in, undefined while more bytes are needed, and throws on anything malformed
 * or over the cap, before reading further.
 */
export class ReplyAssembler {
  private pending: Buffer = Buffer.alloc(0);
  private readonly stubs: Buffer[] = [];
  private stubBytes = 0;

  constructor(
    private readonly iface: string,
    private readonly callId: number,
    private readonly maxReplyBytes = DEFAULT_MAX_REPLY_BYTES,
  ) {}

  push(data: Buffer): Buffer | undefined {
    this.pending = this.pending.length ? Buffer.concat([this.pending, data]) : data;
    while (this.pending.length >= HEADER) {
      const p = this.pending;
      if (p.readUInt8(0) !== 5) throw new DceRpcError(`${this.iface}: not a DCE/RPC version 5 PDU`);
      const ptype = p.readUInt8(2);
      const flags = p.readUInt8(3);
      const fragLen = p.readUInt16LE(8);
      const authLen = p.readUInt16LE(10);
      if (fragLen < HEADER) throw new DceRpcError(`${this.iface}: a fragment length of ${fragLen}, shorter than the 16-byte header`);
      if (p.readUInt32LE(12) !== this.callId) throw new DceRpcError(`${this.iface}: a reply for another call (${p.readUInt32LE(12)})`);
      if (p.length < fragLen) return undefined;
      if (ptype === PTYPE.FAULT) {
        if (fragLen < REQUEST_HEADER + 4) throw new DceRpcError(`${this.iface}: a truncated fault PDU`);
        throw new DceRpcFault(this.iface, p.readUInt32LE(REQUEST_HEADER));
      }
      if (ptype !== PTYPE.RESPONSE) throw new DceRpcError(`${this.iface}: unexpected PDU type ${ptype}`);
      const end = fragLen - (authLen ? authLen + 8 : 0);
      if (end < REQUEST_HEADER) throw new DceRpcError(`${this.iface}: a response fragment of ${fragLen} bytes is too short for its headers`);
      this.stubBytes += end - REQUEST_HEADER;
      if (this.stubBytes > this.maxReplyBytes) {
        throw new DceRpcError(`${this.iface}: the reply is over ${this.maxReplyBytes} bytes; abandoned`);
      }
      this.stubs.push(Buffer.from(p.subarray(REQUEST_HEADER, end)));
      this.pending = p.subarray(fragLen);
      if (flags & PFC_LAST) return Buffer.concat(this.stubs);
    }
    return undefined;
  }
}

/** One bound interface on one open pipe: calls go one at a time, each with its own call id. */
export class RpcPipe {
  private callId = 1;
  private maxRequestFrag = MAX_FRAG;

  constructor(
    private readonly transport: PipeTransport,
    readonly iface: RpcInterface,
    private readonly limits: RpcLimits = {},
  ) {}

  async bind(): Promise<void> {
    const reply = await this.transport.transceive(bindPdu(this.iface, this.callId++));
    this.maxRequestFrag = Math.min(MAX_FRAG, checkBindAck(this.iface, reply));
  }

  /** Sends one request (a single fragment: callers keep their stubs small) and answers the reply's stub. */
  async call(opnum: number, stub: Buffer | NdrWriter): Promise<Buffer> {
    const body = stub instanceof NdrWriter ? stub.done() : stub;
    if (REQUEST_HEADER + body.length > this.maxRequestFrag) {
      throw new DceRpcError(`${this.iface.name}: a request of ${body.length} bytes does not fit one fragment of ${this.maxRequestFrag}`);
    }
    const callId = this.callId++;
    const assembler = new ReplyAssembler(this.iface.name, callId, this.limits.maxReplyBytes);
    let stubOut = assembler.push(await this.transport.transceive(requestPdu(callId, opnum, body)));
    const maxReads = this.limits.maxPipeReads ?? DEFAULT_MAX_PIPE_READS;
    for (let reads = 0; !stubOut; reads++) {
      if (reads >= maxReads) throw new DceRpcError(`${this.iface.name}: no complete reply after ${maxReads} pipe reads; abandoned`);
      const more = await this.transport.read();
      if (more.length === 0) throw new DceRpcError(`${this.iface.name}: the pipe answered an empty read in the middle of a reply`);
      stubOut = assembler.push(more);
    }
    return stubOut;
  }
}
