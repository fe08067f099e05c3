/**
 * An SMB2 session on top of Smb2Connection: negotiate, NTLMv2 session setup,
 * tree connects, and the read-only file operations the connector needs. A
 * dropped connection is re-established once per operation (reconnect,
 * re-authenticate, re-connect trees) before the error reaches the caller.
 */
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { Readable } from "node:stream";
import { ownedCopy, releaseBytes } from "../owned-bytes";
import { decodeChallenge, encodeAuthenticate, encodeNegotiate, ntlmGetMic, ntlmVerifyMic } from "./ntlm";
import { Cipher, Dialect, MessageCipher, MessageSigner, PreauthHash, SigningAlgorithm, deriveSessionKeys, type CipherId, type SigningAlgorithmId } from "./smb-crypto";
import { SmbBadSignatureError, SmbEncryptionRequiredError, SmbSigningRequiredError } from "./smb-errors";
import { parseSmbUsername } from "./smb-username";
import { NTLMSSP_OID, NegState, mechTypeList, negTokenInit, negTokenResp, offeredMechs, parseNegTokenResp, type ServerNegTokenResp } from "./spnego";
import { Smb2Connection, Smb2ConnectionLost, Smb2StatusError, Smb2Unreachable } from "./smb2-connection";
import {
  Access,
  Capabilities,
  Command,
  CreateOptions,
  FSCTL_PIPE_TRANSCEIVE,
  FileAttribute,
  Flags,
  RELATED_FILE_ID,
  SecurityMode,
  SessionFlags,
  ShareFlags,
  Status,
  closeRequest,
  createRequest,
  ioctlRequest,
  negotiateRequest,
  parseCreate,
  parseIoctl,
  parseNegotiate,
  parseQueryDirectory,
  parseRead,
  parseSessionSetup,
  parseTreeConnect,
  queryDirectoryRequest,
  readRequest,
  sessionSetupRequest,
  treeConnectRequest,
  type CreateResponse,
  type DirectoryEntry,
  type NegotiateResponse,
} from "./smb2-messages";
import { bindPdu, checkBindAck, netrShareEnumPdu, parseNetrShareEnum, reassembleResponse, type ShareInfo } from "./srvsvc";

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
}

interface Session {
  conn: Smb2Connection;
  negotiated: NegotiateResponse;
  trees: Map<string, Promise<number>>;
}

export interface OpenFile {
  share: string;
  path: string;
  info: CreateResponse;
}

const DEFAULT_TIMEOUT_MS = 10_000;
/** Ciphers offered, most preferred first: GCM is the faster (MS-SMB2 prefers it too). */
const CIPHERS: readonly CipherId[] = [Cipher.AES_128_GCM, Cipher.AES_128_CCM];
/** Signing algorithms offered on 3.1.1, most preferred first: GMAC is the faster. */
const SIGNING_ALGORITHMS: readonly SigningAlgorithmId[] = [SigningAlgorithm.AES_GMAC, SigningAlgorithm.AES_CMAC];
const SHA_512 = 1;

/** What the client has been through; for diagnostics and tests. */
export interface Smb2ClientStats {
  /** Sessions established (1 + reconnects). */
  sessions: number;
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

export class Smb2Client {
  private session: Promise<Session> | undefined;
  private sessionValue: Session | undefined;
  private closed = false;
  readonly timeoutMs: number;
  readonly stats: Smb2ClientStats = {
    sessions: 0,
    interimResponses: 0,
    dialect: 0,
    signing: false,
    signingAlgorithm: 0,
    cipher: 0,
    encryptSession: false,
    spnego: false,
    framesSent: 0,
  };

  constructor(private readonly opts: Smb2ClientOptions) {
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  /** Connects and authenticates if not already. */
  async connect(): Promise<void> {
    await this.getSession();
  }

  async close(): Promise<void> {
    this.closed = true;
    const s = this.session;
    this.session = undefined;
    if (!s) return;
    try {
      (await s).conn.destroy();
    } catch {
      // a session that never came up has nothing to close
    }
  }

  private getSession(): Promise<Session> {
    if (this.closed) return Promise.reject(new Smb2ConnectionLost("SMB client closed"));
    if (!this.session) {
      const p = this.establish();
      this.session = p;
      this.sessionValue = undefined;
      p.then(
        (v) => {
          if (this.session === p) this.sessionValue = v;
        },
        () => {
          if (this.session === p) this.session = undefined;
        },
      );
    }
    return this.session;
  }

  private async establish(): Promise<Session> {
    const conn = await Smb2Connection.open(this.opts.host, this.opts.port, this.timeoutMs);
    conn.onInterim = () => this.stats.interimResponses++;
    conn.onFrameSent = () => this.stats.framesSent++;
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

      const login = await this.authenticate(conn, neg).catch((e: unknown) => {
        // Servers that require encryption refuse the session outright to a client that cannot
        // encrypt (Samba: ACCESS_DENIED at SESSION_SETUP). Without a cipher, that is the likely cause.
        if (e instanceof Smb2StatusError && e.status === Status.ACCESS_DENIED && !cipherFor(neg)) {
          throw new SmbEncryptionRequiredError(
            `The SMB server ${this.where} refused the session (access denied): it probably requires encryption, which needs SMB 3, and it offered only SMB ${dialectName(neg.dialect)}`,
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
        throw new SmbSigningRequiredError(`The SMB server ${this.where} chose a signing algorithm Sluice does not offer (id ${neg.signingAlgorithm})`);
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
          `The SMB server ${this.where} requires encryption, which needs SMB 3 and a cipher in common (negotiated dialect ${dialectName(neg.dialect)})`,
        );
      }
      // Every 3.x session signs (replies are then checked); 2.x signs where the server requires it.
      const sign = neg.dialect >= Dialect.SMB300 || (neg.securityMode & SecurityMode.SIGNING_REQUIRED) !== 0;
      if (sign) conn.signer = signer;
      if (cipher) conn.cipher = new MessageCipher(cipher, keys.encryptionKey, keys.decryptionKey, conn.sessionId);
      conn.encryptAll = (flags & SessionFlags.ENCRYPT_DATA) !== 0;
      this.stats.sessions++;
      this.stats.dialect = neg.dialect;
      this.stats.signing = sign;
      this.stats.signingAlgorithm = sign ? algorithm : 0;
      this.stats.cipher = cipher;
      this.stats.encryptSession = conn.encryptAll;
      this.stats.spnego = login.spnego;
      return { conn, negotiated: neg, trees: new Map() };
    } catch (e) {
      conn.destroy();
      throw e;
    }
  }

  private get where(): string {
    return `${this.opts.host}:${this.opts.port}`;
  }

  /**
   * NTLMv2 in two SESSION_SETUP round trips: inside SPNEGO when the server offers it (with the
   * MIC and mechListMIC Windows expects), raw NTLMSSP when it does not.
   */
  private async authenticate(conn: Smb2Connection, neg: NegotiateResponse) {
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
    const account = parseSmbUsername(this.opts.username, this.opts.domain);
    const auth = encodeAuthenticate({
      challenge,
      user: account.user,
      password: this.opts.password,
      domain: account.domain ?? challenge.targetName,
      workstation: (this.opts.workstation ?? hostname()).toUpperCase(),
      negotiateMessage: ntlmNegotiate,
      spn: `cifs/${this.opts.serverName ?? this.opts.host}`,
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

  /**
   * Runs `op` on a live session. If the connection drops under it, reconnects
   * once and runs it again; timeouts are not retried (the server is not there).
   */
  private async run<T>(op: (s: Session) => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const s = await this.getSession();
      if (!s.conn.alive) {
        this.forget(s);
        if (attempt === 0) continue;
      }
      try {
        return await op(s);
      } catch (e) {
        const lost = e instanceof Smb2ConnectionLost || isSessionGone(e);
        if (!lost || attempt > 0 || this.closed) throw e;
        this.forget(s);
      }
    }
  }

  /** Drops a dead session, unless another operation already replaced it. */
  private forget(s: Session): void {
    s.conn.destroy();
    if (this.sessionValue === s) {
      this.session = undefined;
      this.sessionValue = undefined;
    }
  }

  private tree(s: Session, share: string): Promise<number> {
    let t = s.trees.get(share);
    if (!t) {
      const unc = `\\\\${this.opts.serverName ?? this.opts.host}\\${share}`;
      t = s.conn.request(Command.TREE_CONNECT, treeConnectRequest(unc)).then((r) => {
        const treeId = r.header.treeId;
        if (parseTreeConnect(r.message).shareFlags & ShareFlags.ENCRYPT_DATA) {
          if (!s.conn.cipher) {
            throw new SmbEncryptionRequiredError(
              `The SMB share "${share}" requires encryption, which needs SMB 3 and a cipher in common (negotiated dialect ${dialectName(s.negotiated.dialect)})`,
            );
          }
          s.conn.encryptedTrees.add(treeId);
        }
        return treeId;
      });
      s.trees.set(share, t);
      t.catch(() => s.trees.delete(share));
    }
    return t;
  }

  private async open(s: Session, share: string, path: string, access: number, options: number): Promise<CreateResponse & { treeId: number }> {
    const treeId = await this.tree(s, share);
    const r = await s.conn.request(Command.CREATE, createRequest(path, access, options), { treeId });
    return { ...parseCreate(r.message), treeId };
  }

  private async closeHandle(s: Session, treeId: number, fileId: Buffer): Promise<void> {
    if (!s.conn.alive) return;
    await s.conn.request(Command.CLOSE, closeRequest(fileId), { treeId }).catch(() => undefined);
  }

  /** Share names, types and comments via SRVSVC NetrShareEnum on IPC$. */
  listShares(): Promise<ShareInfo[]> {
    return this.run(async (s) => {
      const pipe = await this.open(s, "IPC$", "srvsvc", Access.PIPE_READ_WRITE, 0);
      try {
        const maxOut = Math.min(65536, s.negotiated.maxTransactSize);
        const transceive = async (pdu: Buffer): Promise<Buffer> => {
          const r = await s.conn.request(Command.IOCTL, ioctlRequest(FSCTL_PIPE_TRANSCEIVE, pipe.fileId, pdu, maxOut), {
            treeId: pipe.treeId,
            accept: [Status.BUFFER_OVERFLOW],
          });
          let data = Buffer.from(parseIoctl(r.message));
          // A long reply continues in further reads from the pipe.
          let more = r.header.status === Status.BUFFER_OVERFLOW;
          while (more) {
            const rr = await s.conn.request(Command.READ, readRequest(pipe.fileId, 0, maxOut), {
              treeId: pipe.treeId,
              accept: [Status.BUFFER_OVERFLOW],
            });
            data = Buffer.concat([data, parseRead(rr.message)]);
            more = rr.header.status === Status.BUFFER_OVERFLOW;
          }
          return data;
        };
        checkBindAck(await transceive(bindPdu(1)));
        let data = await transceive(netrShareEnumPdu(2, this.opts.serverName ?? this.opts.host));
        let stub = reassembleResponse(data);
        while (!stub) {
          const rr = await s.conn.request(Command.READ, readRequest(pipe.fileId, 0, maxOut), {
            treeId: pipe.treeId,
            accept: [Status.BUFFER_OVERFLOW],
          });
          data = Buffer.concat([data, parseRead(rr.message)]);
          stub = reassembleResponse(data);
        }
        return parseNetrShareEnum(stub);
      } finally {
        await this.closeHandle(s, pipe.treeId, pipe.fileId);
      }
    });
  }

  /** Entries of a directory (`.` and `..` left out); `path` uses backslashes, "" for the share root. */
  listDirectory(share: string, path: string): Promise<DirectoryEntry[]> {
    return this.run(async (s) => {
      const dir = await this.open(s, share, path, Access.GENERIC_READ_FILE, CreateOptions.DIRECTORY_FILE);
      try {
        const out: DirectoryEntry[] = [];
        const outLen = Math.min(65536, s.negotiated.maxTransactSize);
        for (let first = true; ; first = false) {
          const r = await s.conn.request(Command.QUERY_DIRECTORY, queryDirectoryRequest(dir.fileId, first, outLen), {
            treeId: dir.treeId,
            accept: [Status.NO_MORE_FILES],
          });
          if (r.header.status === Status.NO_MORE_FILES) break;
          for (const e of parseQueryDirectory(r.message)) if (e.name !== "." && e.name !== "..") out.push(e);
        }
        return out;
      } finally {
        await this.closeHandle(s, dir.treeId, dir.fileId);
      }
    });
  }

  stat(share: string, path: string): Promise<CreateResponse & { isDirectory: boolean }> {
    return this.run(async (s) => {
      const h = await this.open(s, share, path, Access.READ_ATTRIBUTES, 0);
      await this.closeHandle(s, h.treeId, h.fileId);
      return { ...h, isDirectory: (h.attributes & FileAttribute.DIRECTORY) !== 0 };
    });
  }

  /**
   * A stream of a file's bytes, read one chunk per `_read` so the consumer's
   * pace sets ours. The file is opened before this resolves, so "not found"
   * and "access denied" surface here rather than as a stream error. Reading
   * stops at the size the file had when opened.
   *
   * `expectedSize` (from a directory listing) lets a file that fits one read
   * come in one round trip: CREATE, READ and CLOSE sent as one compound request.
   */
  async createReadStream(
    share: string,
    path: string,
    mapError: (e: Error) => Error = (e) => e,
    expectedSize?: number,
  ): Promise<Readable> {
    type Handle = { s: Session; treeId: number; fileId: Buffer; size: number };
    const openHandle = () =>
      this.run(async (s): Promise<Handle> => {
        const h = await this.open(s, share, path, Access.GENERIC_READ_FILE, CreateOptions.NON_DIRECTORY_FILE);
        return { s, treeId: h.treeId, fileId: h.fileId, size: h.size };
      });
    let handle: Handle | undefined;
    let offset = 0;
    // Bytes read before the stream was made, delivered first.
    let head: Buffer | null = null;
    let finished = false;
    const whole = expectedSize === undefined ? null : await this.run((s) => this.readIfSmall(s, share, path, expectedSize));
    if (whole) {
      head = whole.data;
      offset = whole.data.length;
      // A short read was the whole file; a full one means it grew since it was listed.
      finished = whole.data.length < whole.asked;
    } else {
      handle = await openHandle();
    }
    let reopened = false;
    const release = async () => {
      const h = handle;
      handle = undefined;
      if (h) await this.closeHandle(h.s, h.treeId, h.fileId);
    };
    const readChunk = async (h: Handle): Promise<Buffer | null> => {
      if (offset >= h.size) return null;
      const len = this.readLength(h.s);
      const r = await h.s.conn.request(Command.READ, readRequest(h.fileId, offset, len), {
        treeId: h.treeId,
        payloadSize: len,
        accept: [Status.END_OF_FILE],
      });
      if (r.header.status === Status.END_OF_FILE) return null;
      const data = ownReadData(r.message);
      return data.length ? data : null;
    };
    const stream: Readable = new Readable({
      highWaterMark: 1,
      read: () => {
        const go = async (): Promise<Buffer | null> => {
          if (head) {
            const first = head;
            head = null;
            if (first.length) return first;
          }
          if (finished) return null;
          for (;;) {
            // Abandoned meanwhile: don't reopen a file nobody will close.
            if (stream.destroyed) return null;
            if (!handle) handle = await openHandle();
            try {
              const chunk = await readChunk(handle);
              if (chunk) offset += chunk.length;
              else await release();
              return chunk;
            } catch (e) {
              // A dropped connection mid-file: reopen once and resume at the same offset.
              if (e instanceof Smb2ConnectionLost && !reopened) {
                reopened = true;
                handle = undefined;
                continue;
              }
              throw e;
            }
          }
        };
        go().then(
          (chunk) => stream.push(chunk),
          (err: Error) => stream.destroy(mapError(err)),
        );
      },
      destroy: (err, cb) => {
        release().then(
          () => cb(err),
          () => cb(err),
        );
      },
    });
    return stream;
  }

  /** How much one READ asks for: up to 1 MB where the server takes multi-credit reads, within the credits we hold. */
  private readLength(s: Session): number {
    const perCredit = 65536;
    const maxChunk = s.conn.supportsMultiCredit ? Math.min(s.negotiated.maxReadSize, 1024 * 1024) : Math.min(s.negotiated.maxReadSize, perCredit);
    // Don't ask for more credits than we hold; fall back to one-credit reads.
    const byCredits = Math.max(1, s.conn.availableCredits) * perCredit;
    return Math.max(1, Math.min(maxChunk, byCredits));
  }

  /**
   * A file expected to fit in one READ, read with CREATE + READ + CLOSE in one round trip;
   * null when it is too big for that and should be streamed.
   */
  private async readIfSmall(s: Session, share: string, path: string, expectedSize: number): Promise<{ data: Buffer; asked: number } | null> {
    const asked = this.readLength(s);
    if (expectedSize >= asked) return null;
    const treeId = await this.tree(s, share);
    const [, read] = await s.conn.compound(
      [
        { command: Command.CREATE, body: createRequest(path, Access.GENERIC_READ_FILE, CreateOptions.NON_DIRECTORY_FILE) },
        { command: Command.READ, body: readRequest(RELATED_FILE_ID, 0, asked), payloadSize: asked, accept: [Status.END_OF_FILE] },
        { command: Command.CLOSE, body: closeRequest(RELATED_FILE_ID) },
      ],
      treeId,
    );
    const data = read.header.status === Status.END_OF_FILE ? Buffer.alloc(0) : ownReadData(read.message);
    return { data, asked };
  }
}

/**
 * A READ reply's data as a buffer of its own, and the reply's frame freed at once (with any
 * replies compounded in it, answered by now; nothing looks at a frame once its replies are
 * taken): the caller gets chunks it may free (Connector.read), and a file's bytes do not stay
 * on as a dead frame until V8's next full collection (owned-bytes.ts). A frame in Node's shared
 * pool of small buffers (never larger than Buffer.poolSize) is left alone.
 */
function ownReadData(message: Buffer): Buffer {
  const data = parseRead(message);
  const own = ownedCopy([data], data.length);
  if (message.buffer.byteLength > Buffer.poolSize) releaseBytes(new Uint8Array(message.buffer));
  return own;
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

function isSessionGone(e: unknown): boolean {
  return (
    e instanceof Smb2StatusError &&
    (e.status === Status.NETWORK_SESSION_EXPIRED || e.status === Status.USER_SESSION_DELETED)
  );
}

export { Smb2ConnectionLost, Smb2StatusError, Smb2Unreachable };
export type { DirectoryEntry, ShareInfo };
