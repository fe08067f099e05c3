/**
 * SMB2 wire formats (MS-SMB2 section 2.2): the 64-byte header and the few
 * request/response bodies the client needs. Offsets in bodies count from the
 * start of the SMB2 header, hence the `HEADER_SIZE +` everywhere.
 */

export const HEADER_SIZE = 64;

export const Command = {
  NEGOTIATE: 0x0,
  SESSION_SETUP: 0x1,
  LOGOFF: 0x2,
  TREE_CONNECT: 0x3,
  TREE_DISCONNECT: 0x4,
  CREATE: 0x5,
  CLOSE: 0x6,
  READ: 0x8,
  IOCTL: 0xb,
  QUERY_DIRECTORY: 0xe,
} as const;

export const Status = {
  SUCCESS: 0x00000000,
  PENDING: 0x00000103,
  BUFFER_OVERFLOW: 0x80000005,
  NO_MORE_FILES: 0x80000006,
  MORE_PROCESSING_REQUIRED: 0xc0000016,
  END_OF_FILE: 0xc0000011,
  ACCESS_DENIED: 0xc0000022,
  INVALID_SIGNATURE: 0xc000a000,
  OBJECT_NAME_INVALID: 0xc0000033,
  OBJECT_NAME_NOT_FOUND: 0xc0000034,
  OBJECT_PATH_NOT_FOUND: 0xc000003a,
  SHARING_VIOLATION: 0xc0000043,
  NO_SUCH_USER: 0xc0000064,
  WRONG_PASSWORD: 0xc000006a,
  LOGON_FAILURE: 0xc000006d,
  ACCOUNT_RESTRICTION: 0xc000006e,
  INVALID_LOGON_HOURS: 0xc000006f,
  INVALID_WORKSTATION: 0xc0000070,
  PASSWORD_EXPIRED: 0xc0000071,
  ACCOUNT_DISABLED: 0xc0000072,
  FILE_IS_A_DIRECTORY: 0xc00000ba,
  BAD_NETWORK_NAME: 0xc00000cc,
  NOT_A_DIRECTORY: 0xc0000103,
  NETWORK_SESSION_EXPIRED: 0xc000035c,
  USER_SESSION_DELETED: 0xc0000203,
  ACCOUNT_LOCKED_OUT: 0xc0000234,
  LOGON_TYPE_NOT_GRANTED: 0xc000015b,
  PASSWORD_MUST_CHANGE: 0xc0000224,
} as const;

const STATUS_NAMES = new Map<number, string>(Object.entries(Status).map(([k, v]) => [v, `STATUS_${k}`]));

export function statusName(status: number): string {
  return STATUS_NAMES.get(status) ?? `NTSTATUS 0x${status.toString(16).padStart(8, "0")}`;
}

export const AUTH_FAILURES = new Set<number>([
  Status.LOGON_FAILURE,
  Status.NO_SUCH_USER,
  Status.WRONG_PASSWORD,
  Status.ACCOUNT_RESTRICTION,
  Status.INVALID_LOGON_HOURS,
  Status.INVALID_WORKSTATION,
  Status.PASSWORD_EXPIRED,
  Status.ACCOUNT_DISABLED,
  Status.ACCOUNT_LOCKED_OUT,
  Status.LOGON_TYPE_NOT_GRANTED,
  Status.PASSWORD_MUST_CHANGE,
]);

export const Flags = { SERVER_TO_REDIR: 0x1, ASYNC: 0x2, RELATED_OPERATIONS: 0x4, SIGNED: 0x8 } as const;
export const SecurityMode = { SIGNING_ENABLED: 0x1, SIGNING_REQUIRED: 0x2 } as const;
export const Capabilities = { LARGE_MTU: 0x4, ENCRYPTION: 0x40 } as const;
export const SessionFlags = { IS_GUEST: 0x1, IS_NULL: 0x2, ENCRYPT_DATA: 0x4 } as const;
export const ShareFlags = { ENCRYPT_DATA: 0x8000 } as const;
export const FileAttribute = { DIRECTORY: 0x10 } as const;

export interface Smb2Header {
  creditCharge: number;
  status: number;
  command: number;
  credits: number;
  flags: number;
  messageId: bigint;
  treeId: number;
  sessionId: bigint;
}

export function encodeHeader(h: Smb2Header): Buffer {
  const b = Buffer.alloc(HEADER_SIZE);
  b.write("\xfeSMB", 0, "latin1");
  b.writeUInt16LE(64, 4);
  b.writeUInt16LE(h.creditCharge, 6);
  b.writeUInt32LE(h.status, 8);
  b.writeUInt16LE(h.command, 12);
  b.writeUInt16LE(h.credits, 14);
  b.writeUInt32LE(h.flags, 16);
  b.writeUInt32LE(0, 20);
  b.writeBigUInt64LE(h.messageId, 24);
  b.writeUInt32LE(0xfeff, 32); // ProcessId: any value, servers echo it.
  b.writeUInt32LE(h.treeId, 36);
  b.writeBigUInt64LE(h.sessionId, 40);
  return b;
}

/** Where the next message of a compound chain starts (0: this is the last); header offset 20. */
export function nextCommandOffset(m: Buffer): number {
  return m.readUInt32LE(20);
}

/**
 * In a chain of related operations, the FileId that means "the file the CREATE
 * before me opened" (MS-SMB2 3.2.4.1.4).
 */
export const RELATED_FILE_ID = Buffer.alloc(16, 0xff);

export function decodeHeader(m: Buffer): Smb2Header {
  if (m.length < HEADER_SIZE || m.readUInt32BE(0) !== 0xfe534d42) throw new Error("Not an SMB2 message");
  const flags = m.readUInt32LE(16);
  return {
    creditCharge: m.readUInt16LE(6),
    status: m.readUInt32LE(8),
    command: m.readUInt16LE(12),
    credits: m.readUInt16LE(14),
    flags,
    messageId: m.readBigUInt64LE(24),
    // Async responses carry an AsyncId where the TreeId would be.
    treeId: flags & Flags.ASYNC ? 0 : m.readUInt32LE(36),
    sessionId: m.readBigUInt64LE(40),
  };
}

export const utf16 = (s: string): Buffer => Buffer.from(s, "utf16le");

/** A reply whose offsets or lengths point outside its own message: a broken or hostile server. */
export class Smb2MalformedReply extends Error {
  constructor(what: string) {
    super(`The SMB server sent a malformed ${what}`);
    this.name = "Smb2MalformedReply";
  }
}

/**
 * The `len` bytes at `off` of a reply, after checking they lie inside it (past the header):
 * Buffer.subarray would silently clamp an absurd length instead.
 */
export function fieldOf(m: Buffer, off: number, len: number, what: string): Buffer {
  if (len === 0) return m.subarray(0, 0);
  if (off < HEADER_SIZE || off + len > m.length) throw new Smb2MalformedReply(what);
  return m.subarray(off, off + len);
}

/** A 64-bit size of a reply: past 2^53 - 1 (8 PB) no real file is, and a Number could not count its bytes. */
function sizeAt(b: Buffer, off: number, what: string): number {
  const size = b.readBigUInt64LE(off);
  if (size > BigInt(Number.MAX_SAFE_INTEGER)) throw new Smb2MalformedReply(`${what} (a size of ${size} bytes)`);
  return Number(size);
}

/** FILETIME (100 ns ticks since 1601) to Date. */
function filetimeToDate(b: Buffer, off: number): Date {
  const ticks = b.readBigUInt64LE(off);
  if (ticks === 0n) return new Date(0);
  return new Date(Number(ticks / 10000n) - 11644473600000);
}

// ---- NEGOTIATE ----

/** Every dialect we speak, oldest first; the server picks the highest it shares. */
const DIALECTS = [0x0202, 0x0210, 0x0300, 0x0302, 0x0311];

const ContextType = { PREAUTH_INTEGRITY: 0x1, ENCRYPTION: 0x2, SIGNING: 0x8 } as const;
const SHA_512 = 0x1;

export interface NegotiateOffer {
  clientGuid: Buffer;
  /** The preauth integrity salt (32 random bytes). */
  salt: Buffer;
  /** Cipher ids, most preferred first. */
  ciphers: readonly number[];
  /** Signing algorithm ids, most preferred first. */
  signingAlgorithms: readonly number[];
}

function negotiateContext(type: number, data: Buffer): Buffer {
  const b = Buffer.alloc(8 + data.length);
  b.writeUInt16LE(type, 0);
  b.writeUInt16LE(data.length, 2);
  data.copy(b, 8);
  return b;
}

const pad8 = (n: number) => (n + 7) & ~7;

/** NEGOTIATE offering 2.0.2 to 3.1.1, with the 3.1.1 negotiate contexts (MS-SMB2 2.2.3.1). */
export function negotiateRequest(offer: NegotiateOffer): Buffer {
  const preauth = Buffer.alloc(6 + offer.salt.length);
  preauth.writeUInt16LE(1, 0); // HashAlgorithmCount
  preauth.writeUInt16LE(offer.salt.length, 2);
  preauth.writeUInt16LE(SHA_512, 4);
  offer.salt.copy(preauth, 6);
  const encryption = Buffer.alloc(2 + offer.ciphers.length * 2);
  encryption.writeUInt16LE(offer.ciphers.length, 0);
  offer.ciphers.forEach((c, i) => {
    encryption.writeUInt16LE(c, 2 + i * 2);
  });
  const signing = Buffer.alloc(2 + offer.signingAlgorithms.length * 2);
  signing.writeUInt16LE(offer.signingAlgorithms.length, 0);
  offer.signingAlgorithms.forEach((a, i) => {
    signing.writeUInt16LE(a, 2 + i * 2);
  });
  const contexts = [
    negotiateContext(ContextType.PREAUTH_INTEGRITY, preauth),
    negotiateContext(ContextType.ENCRYPTION, encryption),
    negotiateContext(ContextType.SIGNING, signing),
  ];

  const fixed = 36 + DIALECTS.length * 2;
  const contextOffset = pad8(HEADER_SIZE + fixed);
  const parts: Buffer[] = [];
  let length = contextOffset - HEADER_SIZE;
  contexts.forEach((c, i) => {
    const padded = i === contexts.length - 1 ? c.length : pad8(c.length);
    parts.push(c, Buffer.alloc(padded - c.length));
    length += padded;
  });
  const b = Buffer.alloc(contextOffset - HEADER_SIZE);
  b.writeUInt16LE(36, 0);
  b.writeUInt16LE(DIALECTS.length, 2);
  b.writeUInt16LE(SecurityMode.SIGNING_ENABLED, 4);
  // ENCRYPTION tells a 3.0/3.0.2 server we can encrypt; 3.1.1 uses the context instead.
  b.writeUInt32LE(Capabilities.LARGE_MTU | Capabilities.ENCRYPTION, 8);
  offer.clientGuid.copy(b, 12);
  b.writeUInt32LE(contextOffset, 28);
  b.writeUInt16LE(contexts.length, 32);
  DIALECTS.forEach((d, i) => {
    b.writeUInt16LE(d, 36 + i * 2);
  });
  return Buffer.concat([b, ...parts], length);
}

export interface NegotiateResponse {
  securityMode: number;
  dialect: number;
  capabilities: number;
  maxTransactSize: number;
  maxReadSize: number;
  /** The server's SPNEGO NegTokenInit2 (may be empty). */
  securityBuffer: Buffer;
  /** 3.1.1: the cipher the server chose (0: none in common), undefined when it sent no context. */
  cipher?: number;
  /** 3.1.1: the signing algorithm the server chose, undefined when it sent no context. */
  signingAlgorithm?: number;
  /** 3.1.1: the preauth hash algorithm the server chose. */
  preauthHashAlgorithm?: number;
}

export function parseNegotiate(m: Buffer): NegotiateResponse {
  const o = HEADER_SIZE;
  const secOff = m.readUInt16LE(o + 56);
  const secLen = m.readUInt16LE(o + 58);
  const out: NegotiateResponse = {
    securityMode: m.readUInt16LE(o + 2),
    dialect: m.readUInt16LE(o + 4),
    capabilities: m.readUInt32LE(o + 24),
    maxTransactSize: m.readUInt32LE(o + 28),
    maxReadSize: m.readUInt32LE(o + 32),
    securityBuffer: Buffer.from(fieldOf(m, secOff, secLen, "NEGOTIATE reply (security buffer)")),
  };
  if (out.dialect !== 0x0311) return out;
  const count = m.readUInt16LE(o + 6);
  let off = m.readUInt32LE(o + 60);
  for (let i = 0; i < count && off + 8 <= m.length; i++) {
    const type = m.readUInt16LE(off);
    const len = m.readUInt16LE(off + 2);
    const data = m.subarray(off + 8, off + 8 + len);
    if (type === ContextType.PREAUTH_INTEGRITY && data.length >= 6) out.preauthHashAlgorithm = data.readUInt16LE(4);
    if (type === ContextType.ENCRYPTION && data.length >= 4) out.cipher = data.readUInt16LE(0) ? data.readUInt16LE(2) : 0;
    if (type === ContextType.SIGNING && data.length >= 4) out.signingAlgorithm = data.readUInt16LE(2);
    off = pad8(off + 8 + len);
  }
  return out;
}

// ---- SESSION_SETUP ----

export function sessionSetupRequest(token: Buffer): Buffer {
  const b = Buffer.alloc(24);
  b.writeUInt16LE(25, 0);
  b.writeUInt8(0, 2);
  b.writeUInt8(SecurityMode.SIGNING_ENABLED, 3);
  b.writeUInt16LE(HEADER_SIZE + 24, 12);
  b.writeUInt16LE(token.length, 14);
  return Buffer.concat([b, token]);
}

export function parseSessionSetup(m: Buffer): { sessionFlags: number; token: Buffer } {
  const o = HEADER_SIZE;
  const off = m.readUInt16LE(o + 4);
  const len = m.readUInt16LE(o + 6);
  return { sessionFlags: m.readUInt16LE(o + 2), token: fieldOf(m, off, len, "SESSION_SETUP reply (security buffer)") };
}

// ---- TREE_CONNECT ----

/** ShareFlags of a TREE_CONNECT response: ENCRYPT_DATA says the share must be encrypted. */
export function parseTreeConnect(m: Buffer): { shareFlags: number } {
  return { shareFlags: m.readUInt32LE(HEADER_SIZE + 4) };
}

export function treeConnectRequest(uncPath: string): Buffer {
  const path = utf16(uncPath);
  const b = Buffer.alloc(8);
  b.writeUInt16LE(9, 0);
  b.writeUInt16LE(HEADER_SIZE + 8, 4);
  b.writeUInt16LE(path.length, 6);
  return Buffer.concat([b, path]);
}

// ---- CREATE ----

export const Access = {
  /** FILE_READ_DATA|FILE_READ_EA|FILE_READ_ATTRIBUTES|READ_CONTROL|SYNCHRONIZE */
  GENERIC_READ_FILE: 0x00120089,
  /** FILE_READ_ATTRIBUTES|SYNCHRONIZE: enough to stat, even where reading is denied. */
  READ_ATTRIBUTES: 0x00100080,
  /** read+write data, EA and attributes: what a named pipe needs. */
  PIPE_READ_WRITE: 0x0012019f,
} as const;

export const CreateOptions = { DIRECTORY_FILE: 0x1, NON_DIRECTORY_FILE: 0x40 } as const;

export function createRequest(name: string, desiredAccess: number, createOptions: number): Buffer {
  const nameBuf = utf16(name);
  const b = Buffer.alloc(56);
  b.writeUInt16LE(57, 0);
  b.writeUInt32LE(2, 4); // ImpersonationLevel: Impersonation
  b.writeUInt32LE(desiredAccess, 24);
  b.writeUInt32LE(0x7, 32); // ShareAccess: read|write|delete, so we never block other users
  b.writeUInt32LE(1, 36); // CreateDisposition: FILE_OPEN (never create)
  b.writeUInt32LE(createOptions, 40);
  b.writeUInt16LE(HEADER_SIZE + 56, 44);
  b.writeUInt16LE(nameBuf.length, 46);
  // The variable part may not be empty (StructureSize 57 counts one byte of it).
  return Buffer.concat([b, nameBuf.length ? nameBuf : Buffer.alloc(1)]);
}

export interface CreateResponse {
  fileId: Buffer;
  modifiedAt: Date;
  size: number;
  attributes: number;
}

export function parseCreate(m: Buffer): CreateResponse {
  const o = HEADER_SIZE;
  return {
    modifiedAt: filetimeToDate(m, o + 24),
    size: sizeAt(m, o + 48, "CREATE reply"),
    attributes: m.readUInt32LE(o + 56),
    fileId: Buffer.from(m.subarray(o + 64, o + 80)),
  };
}

export function closeRequest(fileId: Buffer): Buffer {
  const b = Buffer.alloc(24);
  b.writeUInt16LE(24, 0);
  fileId.copy(b, 8);
  return b;
}

// ---- QUERY_DIRECTORY ----

const FILE_DIRECTORY_INFORMATION = 0x01;
const RESTART_SCANS = 0x01;

export function queryDirectoryRequest(fileId: Buffer, first: boolean, outputLength: number): Buffer {
  const pattern = utf16("*");
  const b = Buffer.alloc(32);
  b.writeUInt16LE(33, 0);
  b.writeUInt8(FILE_DIRECTORY_INFORMATION, 2);
  b.writeUInt8(first ? RESTART_SCANS : 0, 3);
  fileId.copy(b, 8);
  b.writeUInt16LE(HEADER_SIZE + 32, 24);
  b.writeUInt16LE(pattern.length, 26);
  b.writeUInt32LE(outputLength, 28);
  return Buffer.concat([b, pattern]);
}

export interface DirectoryEntry {
  name: string;
  size: number;
  modifiedAt: Date;
  /** ChangeTime: moves with a security descriptor change too. */
  changedAt: Date;
  attributes: number;
}

export function parseQueryDirectory(m: Buffer): DirectoryEntry[] {
  const off = m.readUInt16LE(HEADER_SIZE + 2);
  const len = m.readUInt32LE(HEADER_SIZE + 4);
  const buf = fieldOf(m, off, len, "QUERY_DIRECTORY reply");
  const out: DirectoryEntry[] = [];
  for (let p = 0; p + 64 <= buf.length; ) {
    const next = buf.readUInt32LE(p);
    const nameLen = buf.readUInt32LE(p + 60);
    // Each entry holds its name, and the next starts after it: no overlapping or backward steps.
    if (p + 64 + nameLen > buf.length || (next !== 0 && next < 64 + nameLen)) throw new Smb2MalformedReply("QUERY_DIRECTORY entry");
    out.push({
      modifiedAt: filetimeToDate(buf, p + 24),
      changedAt: filetimeToDate(buf, p + 32),
      size: sizeAt(buf, p + 40, "QUERY_DIRECTORY entry"),
      attributes: buf.readUInt32LE(p + 56),
      name: buf.toString("utf16le", p + 64, p + 64 + nameLen),
    });
    if (next === 0) break;
    p += next;
  }
  return out;
}

// ---- READ ----

export function readRequest(fileId: Buffer, offset: number, length: number): Buffer {
  const b = Buffer.alloc(49);
  b.writeUInt16LE(49, 0);
  b.writeUInt8(0x50, 2); // Padding: where we'd like the data (right after the response header)
  b.writeUInt32LE(length, 4);
  b.writeBigUInt64LE(BigInt(offset), 8);
  fileId.copy(b, 16);
  return b;
}

export function parseRead(m: Buffer): Buffer {
  const off = m.readUInt8(HEADER_SIZE + 2);
  const len = m.readUInt32LE(HEADER_SIZE + 4);
  return fieldOf(m, off, len, "READ reply");
}

// ---- IOCTL (named pipe transceive) ----

export const FSCTL_PIPE_TRANSCEIVE = 0x0011c017;

export function ioctlRequest(ctlCode: number, fileId: Buffer, input: Buffer, maxOutput: number): Buffer {
  const b = Buffer.alloc(56);
  b.writeUInt16LE(57, 0);
  b.writeUInt32LE(ctlCode, 4);
  fileId.copy(b, 8);
  b.writeUInt32LE(HEADER_SIZE + 56, 24);
  b.writeUInt32LE(input.length, 28);
  b.writeUInt32LE(maxOutput, 44);
  b.writeUInt32LE(1, 48); // SMB2_0_IOCTL_IS_FSCTL
  return Buffer.concat([b, input]);
}

export function parseIoctl(m: Buffer): Buffer {
  const off = m.readUInt32LE(HEADER_SIZE + 32);
  const len = m.readUInt32LE(HEADER_SIZE + 36);
  return fieldOf(m, off, len, "IOCTL reply");
}
