/** SMB2 session establishment: negotiate, NTLMv2 login (in SPNEGO or raw), session keys, and the signing and encryption that follow. */
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { decodeChallenge, encodeAuthenticate, encodeNegotiate, ntlmGetMic, ntlmVerifyMic } from "./ntlm";
import { Cipher, Dialect, MessageCipher, MessageSigner, PreauthHash, SigningAlgorithm, deriveSessionKeys, type CipherId, type SigningAlgorithmId } from "./smb-crypto";
import { SmbBadSignatureError, SmbEncryptionRequiredError, SmbSigningRequiredError } from "./smb-errors";
import { parseSmbUsername } from "./smb-username";
import { SmbAllowedNetworks, type SmbDialRules } from "./smb-allowed-networks";
import { NTLMSSP_OID, NegState, mechTypeList, negTokenInit, negTokenResp, offeredMechs, parseNegTokenResp, type ServerNegTokenResp } from "./spnego";
import { Smb2Connection, Smb2ConnectionLost, Smb2StatusError } from "./smb2-connection";
import {
  Capabilities,
  Command,
  Flags,
  SecurityMode,
  SessionFlags,
  Status,
  negotiateRequest,
  parseNegotiate,
  parseSessionSetup,
  sessionSetupRequest,
  type NegotiateResponse,
} from "./smb2-messages";

export interface Smb2ClientOptions {
  host: string;
  port: number;
  /** NetBIOS/DNS name used in UNC paths (\\server\share); defaults to host. */
  serverName?: string;
  /** As typed: `DOMAIN\user`, `user@domain` or `user` (see smb-username.ts). */
  username: string;
  password: string;
  /** The domain for a plain `user`; without it, the server's own. */
  domain?: string;
  workstation?: string;
  /** Bound on connecting and on each request. */
  timeoutMs?: number;
  /** Where this instance may dial (smb-allowed-networks.ts): the address the socket reached is checked against it. */
  dialRules?: SmbDialRules;
  /** Told of what is worth a debug line and nothing more (a listing's CLOSE the server refused); nothing by default. */
  debug?: (message: string) => void;
}

/** What the client has been through; for diagnostics and tests. */
export interface Smb2ClientStats {
  /** Sessions established (1 + reconnects). */
  sessions: number;
  /** A finished listing's CLOSEs sent and not yet answered (close() waits for them). */
  closesInFlight: number;
  /** STATUS_PENDING interim responses waited through. */
  interimResponses: number;
  /** Dialect of the current session, e.g. 0x0311. */
  dialect: number;
  /** Whether the current session signs its requests (and checks every reply's signature). */
  signing: boolean;
  /** The current session's signing algorithm (MS-SMB2 ids: 0 HMAC-SHA256, 1 AES-CMAC, 2 AES-GMAC). */
  signingAlgorithm: number;
  /** The cipher the session can encrypt with (1 AES-128-CCM, 2 AES-128-GCM), 0 for none. */
  cipher: number;
  /** Whether the server requires the whole session encrypted. */
  encryptSession: boolean;
  /** Whether the session authenticated with SPNEGO (else raw NTLMSSP). */
  spnego: boolean;
  /** Frames written to the server: one per request, or one per compound chain. */
  framesSent: number;
}

/** A live connection, what it negotiated, and its tree connects by share name. */
export interface Session {
  conn: Smb2Connection;
  negotiated: NegotiateResponse;
  trees: Map<string, Promise<number>>;
}

/** Ciphers offered, most preferred first: GCM is the faster (MS-SMB2 prefers it too). */
const CIPHERS: readonly CipherId[] = [Cipher.AES_128_GCM, Cipher.AES_128_CCM];
/** Signing algorithms offered on 3.1.1, most preferred first: GMAC is the faster. */
const SIGNING_ALGORITHMS: readonly SigningAlgorithmId[] = [SigningAlgorithm.AES_GMAC, SigningAlgorithm.AES_CMAC];
const SHA_512 = 1;

/** A new connection with a signed-in session on it; the connection is destroyed if any step fails. */
export async function establishSession(opts: Smb2ClientOptions, timeoutMs: number, stats: Smb2ClientStats): Promise<Session> {
  const where = `${opts.host}:${opts.port}`;
  const rules = opts.dialRules && SmbAllowedNetworks.fromRules(opts.dialRules);
  const conn = await Smb2Connection.open(opts.host, opts.port, timeoutMs, rules && ((address) => rules.checkPeer(opts.host, address)));
  conn.onInterim = () => stats.interimResponses++;
  conn.onFrameSent = () => stats.framesSent++;
  try {
    // SMB 3.1.1 preauth integrity: every NEGOTIATE and SESSION_SETUP message goes into the hash.
    const preauth = new PreauthHash();
    conn.preauth = preauth;
    const offer = { clientGuid: randomBytes(16), salt: randomBytes(32), ciphers: CIPHERS, signingAlgorithms: SIGNING_ALGORITHMS };
    const neg = parseNegotiate((await conn.request(Command.NEGOTIATE, negotiateRequest(offer))).message);
    if (neg.dialect === Dialect.SMB311 && neg.preauthHashAlgorithm !== SHA_512) {
      throw new Smb2ConnectionLost("The SMB server chose no preauth integrity hash we know");
    }
    conn.supportsMultiCredit = neg.dialect >= Dialect.SMB210 && (neg.capabilities & Capabilities.LARGE_MTU) !== 0;

    const login = await authenticate(conn, neg, opts).catch((e: unknown) => {
      // Servers that require encryption refuse the session outright to a client that cannot
      // encrypt (Samba: ACCESS_DENIED at SESSION_SETUP). Without a cipher, that is the likely cause.
      if (e instanceof Smb2StatusError && e.status === Status.ACCESS_DENIED && !cipherFor(neg)) {
        throw new SmbEncryptionRequiredError(
          `The SMB server ${where} refused the session (access denied): it probably requires encryption, which needs SMB 3, and it offered only SMB ${dialectName(neg.dialect)}`,
        );
      }
      throw e;
    });
    const flags = parseSessionSetup(login.done.message).sessionFlags;
    // A server with `map to guest = bad user` lets unknown users in as guest. We were
    // given credentials, so a guest session means they were not accepted.
    if (flags & (SessionFlags.IS_GUEST | SessionFlags.IS_NULL)) throw new Smb2StatusError(Status.LOGON_FAILURE, Command.SESSION_SETUP);
    conn.preauth = undefined;

    const keys = deriveSessionKeys(neg.dialect, login.sessionKey, preauth.value);
    const algorithm = signingAlgorithmFor(neg.dialect, neg.signingAlgorithm);
    if (algorithm === undefined) {
      throw new SmbSigningRequiredError(`The SMB server ${where} chose a signing algorithm Sluice does not offer (id ${neg.signingAlgorithm})`);
    }
    const signer = new MessageSigner(algorithm, keys.signingKey);
    // 3.1.1 signs the final SESSION_SETUP response with keys bound to the preauth hash: checking
    // it proves nobody changed the negotiation (e.g. to strip signing or encryption).
    const finalSigned = (login.done.header.flags & Flags.SIGNED) !== 0;
    if (finalSigned ? !signer.verify(login.done.message) : neg.dialect === Dialect.SMB311) {
      throw new SmbBadSignatureError(
        `The SMB server's answer to the login ${finalSigned ? "failed signature verification" : "was not signed"}: the connection may have been tampered with`,
      );
    }
    const cipher = cipherFor(neg);
    if (flags & SessionFlags.ENCRYPT_DATA && !cipher) {
      throw new SmbEncryptionRequiredError(
        `The SMB server ${where} requires encryption, which needs SMB 3 and a cipher in common (negotiated dialect ${dialectName(neg.dialect)})`,
      );
    }
    // Every 3.x session signs (replies are then checked); 2.x signs where the server requires it.
    const sign = neg.dialect >= Dialect.SMB300 || (neg.securityMode & SecurityMode.SIGNING_REQUIRED) !== 0;
    if (sign) conn.signer = signer;
    if (cipher) conn.cipher = new MessageCipher(cipher, keys.encryptionKey, keys.decryptionKey, conn.sessionId);
    conn.encryptAll = (flags & SessionFlags.ENCRYPT_DATA) !== 0;
    stats.sessions++;
    stats.dialect = neg.dialect;
    stats.signing = sign;
    stats.signingAlgorithm = sign ? algorithm : 0;
    stats.cipher = cipher;
    stats.encryptSession = conn.encryptAll;
    stats.spnego = login.spnego;
    return { conn, negotiated: neg, trees: new Map() };
  } catch (e) {
    conn.destroy();
    throw e;
  }
}

/**
 * NTLMv2 in two SESSION_SETUP round trips: inside SPNEGO when the server offers it (with the
 * MIC and mechListMIC Windows expects), raw NTLMSSP when it does not.
 */
async function authenticate(conn: Smb2Connection, neg: NegotiateResponse, opts: Smb2ClientOptions) {
  const mechs = offeredMechs(neg.securityBuffer);
  const spnego = mechs !== null;
  if (mechs && mechs.length > 0 && !mechs.some((m) => m.equals(NTLMSSP_OID))) {
    throw new Smb2ConnectionLost("The SMB server does not offer NTLM authentication (Kerberos only is not supported)");
  }
  const ntlmNegotiate = encodeNegotiate();
  const first = await conn.request(Command.SESSION_SETUP, sessionSetupRequest(spnego ? negTokenInit(ntlmNegotiate) : ntlmNegotiate), {
    accept: [Status.MORE_PROCESSING_REQUIRED],
  });
  conn.sessionId = first.header.sessionId;
  let token = parseSessionSetup(first.message).token;
  if (spnego) {
    const resp = parseNegTokenResp(token);
    if (resp.negState === NegState.REJECT || !resp.responseToken) throw new Smb2StatusError(Status.LOGON_FAILURE, Command.SESSION_SETUP);
    token = resp.responseToken;
  }
  const challenge = decodeChallenge(token);
  const account = parseSmbUsername(opts.username, opts.domain);
  const auth = encodeAuthenticate({
    challenge,
    user: account.user,
    password: opts.password,
    domain: account.domain ?? challenge.targetName,
    workstation: (opts.workstation ?? hostname()).toUpperCase(),
    negotiateMessage: ntlmNegotiate,
    spn: `cifs/${opts.serverName ?? opts.host}`,
  });
  // With a MIC in the NTLM message, SPNEGO must sign the mechanism list too (MS-SPNG 3.1.5.1).
  const mechListMic = spnego && auth.hasMic ? ntlmGetMic(auth.sessionKey, "client-to-server", mechTypeList()) : undefined;
  const done = await conn.request(Command.SESSION_SETUP, sessionSetupRequest(spnego ? negTokenResp(auth.message, mechListMic) : auth.message));
  if (spnego) {
    const final = parseSessionSetup(done.message).token;
    const resp: ServerNegTokenResp = final.length ? parseNegTokenResp(final) : {};
    if (resp.negState !== undefined && resp.negState !== NegState.ACCEPT_COMPLETED) {
      throw new Smb2StatusError(Status.LOGON_FAILURE, Command.SESSION_SETUP);
    }
    if (mechListMic && resp.mechListMic && !ntlmVerifyMic(auth.sessionKey, mechTypeList(), resp.mechListMic)) {
      throw new SmbBadSignatureError("The SMB server's SPNEGO mechListMIC does not verify: the login may have been tampered with");
    }
  }
  return { done, sessionKey: auth.sessionKey, spnego };
}

/** The signing algorithm of a dialect: HMAC-SHA256 for 2.x, AES-CMAC for 3.0.x, the negotiated one (else CMAC) for 3.1.1. */
function signingAlgorithmFor(dialect: number, negotiated: number | undefined): SigningAlgorithmId | undefined {
  if (dialect < Dialect.SMB300) return SigningAlgorithm.HMAC_SHA256;
  if (dialect < Dialect.SMB311 || negotiated === undefined) return SigningAlgorithm.AES_CMAC;
  return SIGNING_ALGORITHMS.find((a) => a === negotiated);
}

/** The cipher the session may encrypt with, 0 for none: 3.1.1 negotiates it, 3.0.x has CCM if the server can encrypt. */
function cipherFor(neg: NegotiateResponse): CipherId | 0 {
  if (neg.dialect === Dialect.SMB311) return neg.cipher === Cipher.AES_128_GCM || neg.cipher === Cipher.AES_128_CCM ? neg.cipher : 0;
  if (neg.dialect >= Dialect.SMB300 && neg.capabilities & Capabilities.ENCRYPTION) return Cipher.AES_128_CCM;
  return 0;
}

// biome-ignore lint/complexity/useSimpleNumberKeys: dialect codes are written in hex, as in MS-SMB2 2.2.3
const DIALECT_NAMES: Record<number, string> = { 0x0202: "2.0.2", 0x0210: "2.1", 0x0300: "3.0", 0x0302: "3.0.2", 0x0311: "3.1.1" };

export function dialectName(dialect: number): string {
  return DIALECT_NAMES[dialect] ?? `0x${dialect.toString(16)}`;
}
