/**
 * NTLMSSP messages and the NTLMv2 response (MS-NLMP). Only v2: Samba's default
 * (`ntlm auth = ntlmv2-only`) and current Windows refuse NTLMv1.
 */
import { createHmac, randomBytes } from "node:crypto";
import { md4 } from "./md4";

const SIGNATURE = Buffer.from("NTLMSSP\0", "latin1");

export const NegotiateFlags = {
  UNICODE: 0x00000001,
  REQUEST_TARGET: 0x00000004,
  SIGN: 0x00000010,
  NTLM: 0x00000200,
  ALWAYS_SIGN: 0x00008000,
  EXTENDED_SESSIONSECURITY: 0x00080000,
  TARGET_INFO: 0x00800000,
  N128: 0x20000000,
  KEY_EXCH: 0x40000000,
  N56: 0x80000000,
} as const;

const CLIENT_FLAGS =
  (NegotiateFlags.UNICODE |
    NegotiateFlags.REQUEST_TARGET |
    NegotiateFlags.SIGN |
    NegotiateFlags.NTLM |
    NegotiateFlags.ALWAYS_SIGN |
    NegotiateFlags.EXTENDED_SESSIONSECURITY |
    NegotiateFlags.TARGET_INFO |
    NegotiateFlags.N128 |
    NegotiateFlags.KEY_EXCH |
    NegotiateFlags.N56) >>>
  0;

const AV_EOL = 0;
const AV_TIMESTAMP = 7;

const utf16 = (s: string): Buffer => Buffer.from(s, "utf16le");

function hmacMd5(key: Buffer, ...data: Buffer[]): Buffer {
  const h = createHmac("md5", key);
  for (const d of data) h.update(d);
  return h.digest();
}

/** NTOWFv1: MD4 of the UTF-16LE password (the "NT hash"). */
export function ntowfv1(password: string): Buffer {
  return md4(utf16(password));
}

/** NTOWFv2 = HMAC_MD5(NT hash, UTF16(UPPER(user) + domain)). */
export function ntowfv2(password: string, user: string, domain: string): Buffer {
  return hmacMd5(ntowfv1(password), utf16(user.toUpperCase() + domain));
}

/** RC4, for the key exchange only (it too sits in OpenSSL 3's legacy provider). */
export function rc4(key: Buffer, data: Buffer): Buffer {
  const s = new Uint8Array(256);
  for (let i = 0; i < 256; i++) s[i] = i;
  for (let i = 0, j = 0; i < 256; i++) {
    j = (j + s[i] + key[i % key.length]) & 0xff;
    [s[i], s[j]] = [s[j], s[i]];
  }
  const out = Buffer.alloc(data.length);
  for (let n = 0, i = 0, j = 0; n < data.length; n++) {
    i = (i + 1) & 0xff;
    j = (j + s[i]) & 0xff;
    [s[i], s[j]] = [s[j], s[i]];
    out[n] = data[n] ^ s[(s[i] + s[j]) & 0xff];
  }
  return out;
}

export interface NtlmV2Result {
  ntChallengeResponse: Buffer;
  lmChallengeResponse: Buffer;
  ntProofStr: Buffer;
  sessionBaseKey: Buffer;
}

/** MS-NLMP 3.3.2 ComputeResponse for NTLMv2. `timestamp` is a FILETIME (100 ns since 1601). */
export function computeNtlmV2Response(args: {
  responseKey: Buffer;
  serverChallenge: Buffer;
  clientChallenge: Buffer;
  timestamp: Buffer;
  targetInfo: Buffer;
  /** MS-NLMP: send Z(24) for LM when the server supplied MsvAvTimestamp. */
  zeroLm?: boolean;
}): NtlmV2Result {
  const temp = Buffer.concat([
    Buffer.from([1, 1, 0, 0, 0, 0, 0, 0]),
    args.timestamp,
    args.clientChallenge,
    Buffer.alloc(4),
    args.targetInfo,
    Buffer.alloc(4),
  ]);
  const ntProofStr = hmacMd5(args.responseKey, args.serverChallenge, temp);
  const lm = args.zeroLm
    ? Buffer.alloc(24)
    : Buffer.concat([hmacMd5(args.responseKey, args.serverChallenge, args.clientChallenge), args.clientChallenge]);
  return {
    ntChallengeResponse: Buffer.concat([ntProofStr, temp]),
    lmChallengeResponse: lm,
    ntProofStr,
    sessionBaseKey: hmacMd5(args.responseKey, ntProofStr),
  };
}

export function encodeNegotiate(): Buffer {
  const b = Buffer.alloc(32);
  SIGNATURE.copy(b, 0);
  b.writeUInt32LE(1, 8);
  b.writeUInt32LE(CLIENT_FLAGS, 12);
  // Empty domain and workstation fields (offsets point at the end of the message).
  b.writeUInt32LE(32, 20);
  b.writeUInt32LE(32, 28);
  return b;
}

export interface ChallengeMessage {
  flags: number;
  serverChallenge: Buffer;
  targetInfo: Buffer;
}

/** Accepts a raw NTLMSSP CHALLENGE or one wrapped in SPNEGO (found by its signature). */
export function decodeChallenge(token: Buffer): ChallengeMessage {
  const start = token.indexOf(SIGNATURE);
  if (start < 0 || token.length < start + 48) throw new Error("No NTLMSSP challenge in the server's reply");
  const m = token.subarray(start);
  if (m.readUInt32LE(8) !== 2) throw new Error("Unexpected NTLMSSP message type");
  const tiLen = m.readUInt16LE(40);
  const tiOff = m.readUInt32LE(44);
  if (tiOff + tiLen > m.length) throw new Error("Truncated NTLMSSP challenge");
  return {
    flags: m.readUInt32LE(20),
    serverChallenge: Buffer.from(m.subarray(24, 32)),
    targetInfo: Buffer.from(m.subarray(tiOff, tiOff + tiLen)),
  };
}

function findAvPair(targetInfo: Buffer, id: number): Buffer | undefined {
  for (let off = 0; off + 4 <= targetInfo.length; ) {
    const avId = targetInfo.readUInt16LE(off);
    const avLen = targetInfo.readUInt16LE(off + 2);
    if (avId === AV_EOL) return undefined;
    if (avId === id) return targetInfo.subarray(off + 4, off + 4 + avLen);
    off += 4 + avLen;
  }
  return undefined;
}

export function filetimeNow(): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE((BigInt(Date.now()) + 11644473600000n) * 10000n);
  return b;
}

export interface AuthenticateResult {
  message: Buffer;
  /** The ExportedSessionKey: the SMB2 session key used for signing. */
  sessionKey: Buffer;
}

export function encodeAuthenticate(args: {
  challenge: ChallengeMessage;
  user: string;
  password: string;
  domain: string;
  workstation: string;
  /** Test hooks; random/now in real use. */
  clientChallenge?: Buffer;
  exportedSessionKey?: Buffer;
}): AuthenticateResult {
  const { challenge } = args;
  const flags = (CLIENT_FLAGS & challenge.flags) >>> 0;
  const serverTime = findAvPair(challenge.targetInfo, AV_TIMESTAMP);
  const r = computeNtlmV2Response({
    responseKey: ntowfv2(args.password, args.user, args.domain),
    serverChallenge: challenge.serverChallenge,
    clientChallenge: args.clientChallenge ?? randomBytes(8),
    timestamp: serverTime ? Buffer.from(serverTime) : filetimeNow(),
    targetInfo: challenge.targetInfo,
    zeroLm: serverTime !== undefined,
  });
  // For NTLMv2 the KeyExchangeKey is the SessionBaseKey.
  let sessionKey: Buffer = r.sessionBaseKey;
  let encryptedKey: Buffer = Buffer.alloc(0);
  if (flags & NegotiateFlags.KEY_EXCH) {
    sessionKey = args.exportedSessionKey ?? randomBytes(16);
    encryptedKey = rc4(r.sessionBaseKey, sessionKey);
  }
  const fields = [
    r.lmChallengeResponse,
    r.ntChallengeResponse,
    utf16(args.domain),
    utf16(args.user),
    utf16(args.workstation),
    encryptedKey,
  ];
  const header = Buffer.alloc(64);
  SIGNATURE.copy(header, 0);
  header.writeUInt32LE(3, 8);
  let offset = 64;
  fields.forEach((f, i) => {
    header.writeUInt16LE(f.length, 12 + i * 8);
    header.writeUInt16LE(f.length, 14 + i * 8);
    header.writeUInt32LE(offset, 16 + i * 8);
    offset += f.length;
  });
  header.writeUInt32LE(flags, 60);
  return { message: Buffer.concat([header, ...fields]), sessionKey };
}
