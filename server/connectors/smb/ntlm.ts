/**
 * NTLMSSP messages and the NTLMv2 response (MS-NLMP). Only v2: Samba's default
 * (`ntlm auth = ntlmv2-only`) and current Windows refuse NTLMv1.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { md4 } from "./md4";
import { utf16 } from "./smb2-messages";

const SIGNATURE = Buffer.from("NTLMSSP\0", "latin1");

export const NegotiateFlags = {
  UNICODE: 0x00000001,
  REQUEST_TARGET: 0x00000004,
  SIGN: 0x00000010,
  NTLM: 0x00000200,
  ALWAYS_SIGN: 0x00008000,
  EXTENDED_SESSIONSECURITY: 0x00080000,
  TARGET_INFO: 0x00800000,
  VERSION: 0x02000000,
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
    NegotiateFlags.VERSION |
    NegotiateFlags.N128 |
    NegotiateFlags.KEY_EXCH |
    NegotiateFlags.N56) >>>
  0;

const AV_EOL = 0;
const AV_FLAGS = 6;
const AV_TIMESTAMP = 7;
const AV_TARGET_NAME = 9;
const AV_CHANNEL_BINDINGS = 10;
/** MsvAvFlags bit: the AUTHENTICATE message carries a MIC. */
const AV_FLAG_MIC = 0x2;

/** The VERSION structure we send: Windows 10 (10.0), NTLM revision 15. Informational only. */
const VERSION = Buffer.from([10, 0, 0x61, 0x4a, 0, 0, 0, 0x0f]);

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
  const b = Buffer.alloc(40);
  SIGNATURE.copy(b, 0);
  b.writeUInt32LE(1, 8);
  b.writeUInt32LE(CLIENT_FLAGS, 12);
  // Empty domain and workstation fields (offsets point at the end of the message).
  b.writeUInt32LE(40, 20);
  b.writeUInt32LE(40, 28);
  VERSION.copy(b, 32);
  return b;
}

export interface ChallengeMessage {
  flags: number;
  serverChallenge: Buffer;
  targetInfo: Buffer;
  /** The server's (NetBIOS) domain or machine name: the domain of a user typed without one. */
  targetName: string;
  /** The message as received: the MIC covers it. */
  raw: Buffer;
}

/** Accepts a raw NTLMSSP CHALLENGE or one wrapped in SPNEGO (found by its signature). */
export function decodeChallenge(token: Buffer): ChallengeMessage {
  const start = token.indexOf(SIGNATURE);
  if (start < 0 || token.length < start + 48) throw new Error("No NTLMSSP challenge in the server's reply");
  const m = token.subarray(start);
  if (m.readUInt32LE(8) !== 2) throw new Error("Unexpected NTLMSSP message type");
  const tiLen = m.readUInt16LE(40);
  const tiOff = m.readUInt32LE(44);
  const tnLen = m.readUInt16LE(12);
  const tnOff = m.readUInt32LE(16);
  if (tiOff + tiLen > m.length || tnOff + tnLen > m.length) throw new Error("Truncated NTLMSSP challenge");
  return {
    flags: m.readUInt32LE(20),
    serverChallenge: Buffer.from(m.subarray(24, 32)),
    targetInfo: Buffer.from(m.subarray(tiOff, tiOff + tiLen)),
    targetName: m.toString("utf16le", tnOff, tnOff + tnLen),
    // The message ends with its last field (servers put the payload right after the header).
    raw: Buffer.from(m.subarray(0, Math.max(48, tiOff + tiLen, tnOff + tnLen))),
  };
}

/** The AV pairs without their MsvAvEOL terminator. */
function avPairsWithoutEol(targetInfo: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let off = 0; off + 4 <= targetInfo.length; ) {
    const avId = targetInfo.readUInt16LE(off);
    const avLen = targetInfo.readUInt16LE(off + 2);
    if (avId === AV_EOL) break;
    out.push(targetInfo.subarray(off, off + 4 + avLen));
    off += 4 + avLen;
  }
  return out;
}

function avPair(id: number, value: Buffer): Buffer {
  const b = Buffer.alloc(4 + value.length);
  b.writeUInt16LE(id, 0);
  b.writeUInt16LE(value.length, 2);
  value.copy(b, 4);
  return b;
}

/**
 * The target info the client returns when it sends a MIC (MS-NLMP 3.1.5.1.2): the server's
 * pairs, MsvAvFlags with the MIC bit, an all-zero channel binding (none on SMB) and the
 * service principal name, as Windows sends them.
 */
function clientTargetInfo(serverTargetInfo: Buffer, spn: string | undefined): Buffer {
  let flags = AV_FLAG_MIC;
  const pairs = avPairsWithoutEol(serverTargetInfo).filter((p) => {
    const id = p.readUInt16LE(0);
    if (id === AV_FLAGS) flags |= p.readUInt32LE(4);
    return id !== AV_FLAGS && id !== AV_CHANNEL_BINDINGS && id !== AV_TARGET_NAME;
  });
  const flagValue = Buffer.alloc(4);
  flagValue.writeUInt32LE(flags >>> 0);
  pairs.push(avPair(AV_FLAGS, flagValue), avPair(AV_CHANNEL_BINDINGS, Buffer.alloc(16)));
  if (spn) pairs.push(avPair(AV_TARGET_NAME, utf16(spn)));
  pairs.push(Buffer.alloc(4)); // MsvAvEOL
  return Buffer.concat(pairs);
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

function filetimeNow(): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE((BigInt(Date.now()) + 11644473600000n) * 10000n);
  return b;
}

export interface AuthenticateResult {
  message: Buffer;
  /** The ExportedSessionKey: the SMB2 session key used for signing. */
  sessionKey: Buffer;
  /** Whether the message carries a MIC (then SPNEGO must carry a mechListMIC too). */
  hasMic: boolean;
}

export function encodeAuthenticate(args: {
  challenge: ChallengeMessage;
  user: string;
  password: string;
  domain: string;
  workstation: string;
  /**
   * The NEGOTIATE message this exchange began with. With it, and when the server sent a
   * timestamp, the message carries a MIC over all three messages (MS-NLMP 3.1.5.1.2).
   */
  negotiateMessage?: Buffer;
  /** The service principal name for MsvAvTargetName, e.g. "cifs/server". */
  spn?: string;
  /** Test hooks; random/now in real use. */
  clientChallenge?: Buffer;
  exportedSessionKey?: Buffer;
}): AuthenticateResult {
  const { challenge } = args;
  const flags = (CLIENT_FLAGS & challenge.flags) >>> 0;
  const serverTime = findAvPair(challenge.targetInfo, AV_TIMESTAMP);
  const withMic = serverTime !== undefined && args.negotiateMessage !== undefined;
  const r = computeNtlmV2Response({
    responseKey: ntowfv2(args.password, args.user, args.domain),
    serverChallenge: challenge.serverChallenge,
    clientChallenge: args.clientChallenge ?? randomBytes(8),
    timestamp: serverTime ? Buffer.from(serverTime) : filetimeNow(),
    targetInfo: withMic ? clientTargetInfo(challenge.targetInfo, args.spn) : challenge.targetInfo,
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
  // Fixed part, Version (8) and MIC (16): the payload starts at 88.
  const header = Buffer.alloc(AUTH_HEADER_SIZE);
  SIGNATURE.copy(header, 0);
  header.writeUInt32LE(3, 8);
  let offset = AUTH_HEADER_SIZE;
  fields.forEach((f, i) => {
    header.writeUInt16LE(f.length, 12 + i * 8);
    header.writeUInt16LE(f.length, 14 + i * 8);
    header.writeUInt32LE(offset, 16 + i * 8);
    offset += f.length;
  });
  header.writeUInt32LE(flags, 60);
  VERSION.copy(header, 64);
  const message = Buffer.concat([header, ...fields]);
  if (withMic) {
    // MIC = HMAC_MD5(ExportedSessionKey, NEGOTIATE || CHALLENGE || AUTHENTICATE with a zero MIC).
    hmacMd5(sessionKey, args.negotiateMessage!, challenge.raw, message).copy(message, MIC_OFFSET);
  }
  return { message, sessionKey, hasMic: withMic };
}

const AUTH_HEADER_SIZE = 88;
const MIC_OFFSET = 72;

// ---- NTLM session security for GSS_GetMIC (MS-NLMP 3.4.4.2, 3.4.5): SPNEGO's mechListMIC ----

export type NtlmDirection = "client-to-server" | "server-to-client";

/** SIGNKEY (MS-NLMP 3.4.5.2) with extended session security. */
export function ntlmSignKey(exportedSessionKey: Buffer, direction: NtlmDirection): Buffer {
  return createHash("md5")
    .update(exportedSessionKey)
    .update(Buffer.from(`session key to ${direction} signing key magic constant\0`, "latin1"))
    .digest();
}

/** SEALKEY (MS-NLMP 3.4.5.3) for a 128-bit session. */
export function ntlmSealKey(exportedSessionKey: Buffer, direction: NtlmDirection): Buffer {
  return createHash("md5")
    .update(exportedSessionKey)
    .update(Buffer.from(`session key to ${direction} sealing key magic constant\0`, "latin1"))
    .digest();
}

/**
 * The NTLM signature of `message` as the first message of its direction (sequence number 0,
 * a fresh RC4 state): Version 1, the RC4-sealed first 8 bytes of the HMAC, the sequence number.
 */
export function ntlmGetMic(exportedSessionKey: Buffer, direction: NtlmDirection, message: Buffer, seqNum = 0): Buffer {
  const seq = Buffer.alloc(4);
  seq.writeUInt32LE(seqNum);
  const checksum = hmacMd5(ntlmSignKey(exportedSessionKey, direction), seq, message).subarray(0, 8);
  const out = Buffer.alloc(16);
  out.writeUInt32LE(1, 0);
  rc4(ntlmSealKey(exportedSessionKey, direction), checksum).copy(out, 4);
  seq.copy(out, 12);
  return out;
}

/** Checks the server's signature over `message` (its mechListMIC), in constant time. */
export function ntlmVerifyMic(exportedSessionKey: Buffer, message: Buffer, mic: Buffer): boolean {
  const expected = ntlmGetMic(exportedSessionKey, "server-to-client", message);
  return mic.length === expected.length && timingSafeEqual(mic, expected);
}
