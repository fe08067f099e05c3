/**
 * An SMB2 session on top of Smb2Connection: negotiate, NTLMv2 session setup,
 * tree connects, and the read-only file operations the connector needs. A
 * dropped connection is re-established once per operation (reconnect,
 * re-authenticate, re-connect trees) before the error reaches the caller.
 */
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { Readable } from "node:stream";
import { decodeChallenge, encodeAuthenticate, encodeNegotiate } from "./ntlm";
import { Smb2Connection, Smb2ConnectionLost, Smb2StatusError, Smb2Unreachable } from "./smb2-connection";
import {
  Access,
  Capabilities,
  Command,
  CreateOptions,
  FSCTL_PIPE_TRANSCEIVE,
  FileAttribute,
  RELATED_FILE_ID,
  SecurityMode,
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
  username: string;
  password: string;
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
const SESSION_FLAG_IS_GUEST = 0x1;
const SESSION_FLAG_IS_NULL = 0x2;

/** What the client has been through; for diagnostics and tests. */
export interface Smb2ClientStats {
  /** Sessions established (1 + reconnects). */
  sessions: number;
  /** STATUS_PENDING interim responses waited through. */
  interimResponses: number;
  /** Dialect of the current session, e.g. 0x0210. */
  dialect: number;
  /** Whether the current session signs its requests. */
  signing: boolean;
  /** Frames written to the server: one per request, or one per compound chain. */
  framesSent: number;
}

export class Smb2Client {
  private session: Promise<Session> | undefined;
  private sessionValue: Session | undefined;
  private closed = false;
  readonly timeoutMs: number;
  readonly stats: Smb2ClientStats = { sessions: 0, interimResponses: 0, dialect: 0, signing: false, framesSent: 0 };

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
      const neg = parseNegotiate((await conn.request(Command.NEGOTIATE, negotiateRequest(randomBytes(16)))).message);
      conn.supportsMultiCredit = neg.dialect >= 0x0210 && (neg.capabilities & Capabilities.LARGE_MTU) !== 0;

      const first = await conn.request(Command.SESSION_SETUP, sessionSetupRequest(encodeNegotiate()), {
        accept: [Status.MORE_PROCESSING_REQUIRED],
      });
      conn.sessionId = first.header.sessionId;
      const challenge = decodeChallenge(parseSessionSetup(first.message).token);
      const auth = encodeAuthenticate({
        challenge,
        user: this.opts.username,
        password: this.opts.password,
        domain: this.opts.domain ?? "",
        workstation: (this.opts.workstation ?? hostname()).toUpperCase(),
      });
      const done = await conn.request(Command.SESSION_SETUP, sessionSetupRequest(auth.message));
      const flags = parseSessionSetup(done.message).sessionFlags;
      // A server with `map to guest = bad user` lets unknown users in as guest. We were
      // given credentials, so a guest session means they were not accepted.
      if (flags & (SESSION_FLAG_IS_GUEST | SESSION_FLAG_IS_NULL)) throw new Smb2StatusError(Status.LOGON_FAILURE, Command.SESSION_SETUP);
      if (neg.securityMode & SecurityMode.SIGNING_REQUIRED) conn.signingKey = auth.sessionKey;
      this.stats.sessions++;
      this.stats.dialect = neg.dialect;
      this.stats.signing = conn.signingKey !== undefined;
      return { conn, negotiated: neg, trees: new Map() };
    } catch (e) {
      conn.destroy();
      throw e;
    }
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
      t = s.conn.request(Command.TREE_CONNECT, treeConnectRequest(unc)).then((r) => r.header.treeId);
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
      const data = parseRead(r.message);
      return data.length ? Buffer.from(data) : null;
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
    const data = read.header.status === Status.END_OF_FILE ? Buffer.alloc(0) : Buffer.from(parseRead(read.message));
    return { data, asked };
  }
}

function isSessionGone(e: unknown): boolean {
  return (
    e instanceof Smb2StatusError &&
    (e.status === Status.NETWORK_SESSION_EXPIRED || e.status === Status.USER_SESSION_DELETED)
  );
}

export { Smb2ConnectionLost, Smb2StatusError, Smb2Unreachable };
export type { DirectoryEntry, ShareInfo };
