/**
 * The SMB2 client the connector uses: sessions (smb2-session.ts), tree connects, and the read-only
 * file operations (file reading in smb2-file-reader.ts). A dropped connection is re-established
 * once per operation (reconnect, re-authenticate, re-connect trees) before the error reaches the caller.
 */
import type { Readable } from "node:stream";
import { SmbEncryptionRequiredError } from "./smb-errors";
import { Smb2ConnectionLost, Smb2StatusError, Smb2Unreachable } from "./smb2-connection";
import { openReadStream, type SessionOps } from "./smb2-file-reader";
import {
  Access,
  Command,
  CreateOptions,
  FSCTL_PIPE_TRANSCEIVE,
  FileAttribute,
  ShareFlags,
  Status,
  closeRequest,
  createRequest,
  ioctlRequest,
  parseCreate,
  parseIoctl,
  parseQueryDirectory,
  parseRead,
  parseTreeConnect,
  queryDirectoryRequest,
  readRequest,
  treeConnectRequest,
  type CreateResponse,
  type DirectoryEntry,
} from "./smb2-messages";
import { dialectName, establishSession, type Session, type Smb2ClientOptions, type Smb2ClientStats } from "./smb2-session";
import { bindPdu, checkBindAck, netrShareEnumPdu, parseNetrShareEnum, reassembleResponse, type ShareInfo } from "./srvsvc";

const DEFAULT_TIMEOUT_MS = 10_000;

/**
 * Bounds on the loops a server drives (issue 34): a folder's entries, its listing's pages
 * ("more" rounds), and a pipe reply's bytes and reads. Real servers stay far below them: a
 * 64 KB page holds at least ~110 entries, so 100 000 entries take under 1 000 pages.
 */
export const LISTING_LIMITS = { maxEntries: 100_000, maxPages: 4_096 };
export const PIPE_LIMITS = { maxReplyBytes: 1024 * 1024, maxReads: 64 };

/** The server broke one of the bounds above: what it sent is not used. */
export class Smb2LimitExceeded extends Error {
  constructor(message: string) {
    super(message);
    this.name = "Smb2LimitExceeded";
  }
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

  /** The operations file reading runs on (smb2-file-reader.ts), kept private to this client. */
  private readonly sessionOps: SessionOps = {
    run: (op) => this.run(op),
    tree: (s, share) => this.tree(s, share),
    open: (s, share, path, access, options) => this.open(s, share, path, access, options),
    closeHandle: (s, treeId, fileId) => this.closeHandle(s, treeId, fileId),
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
      const p = establishSession(this.opts, this.timeoutMs, this.stats);
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
        // One budget of bytes and reads for the whole exchange: a server that keeps saying "more" stops here.
        let bytes = 0;
        let reads = 0;
        const take = (chunk: Buffer, more: boolean): Buffer => {
          bytes += chunk.length;
          if (bytes > PIPE_LIMITS.maxReplyBytes) throw new Smb2LimitExceeded(`The SMB server's share list is over ${PIPE_LIMITS.maxReplyBytes} bytes`);
          if (more && chunk.length === 0) throw new Smb2LimitExceeded("The SMB server said more of the share list follows and sent none of it");
          return chunk;
        };
        const readPipe = async (): Promise<{ chunk: Buffer; more: boolean }> => {
          if (++reads > PIPE_LIMITS.maxReads) throw new Smb2LimitExceeded(`The SMB server's share list did not end within ${PIPE_LIMITS.maxReads} reads`);
          const rr = await s.conn.request(Command.READ, readRequest(pipe.fileId, 0, maxOut), {
            treeId: pipe.treeId,
            accept: [Status.BUFFER_OVERFLOW],
          });
          const more = rr.header.status === Status.BUFFER_OVERFLOW;
          return { chunk: take(parseRead(rr.message), more), more };
        };
        const transceive = async (pdu: Buffer): Promise<Buffer> => {
          const r = await s.conn.request(Command.IOCTL, ioctlRequest(FSCTL_PIPE_TRANSCEIVE, pipe.fileId, pdu, maxOut), {
            treeId: pipe.treeId,
            accept: [Status.BUFFER_OVERFLOW],
          });
          // A long reply continues in further reads from the pipe.
          let more = r.header.status === Status.BUFFER_OVERFLOW;
          const parts = [take(Buffer.from(parseIoctl(r.message)), more)];
          while (more) {
            const next = await readPipe();
            parts.push(next.chunk);
            more = next.more;
          }
          return Buffer.concat(parts);
        };
        checkBindAck(await transceive(bindPdu(1)));
        let data = await transceive(netrShareEnumPdu(2, this.opts.serverName ?? this.opts.host));
        let stub = reassembleResponse(data);
        while (!stub) {
          const next = await readPipe();
          if (next.chunk.length === 0) throw new Smb2LimitExceeded("The SMB server's share list ended before its last fragment");
          data = Buffer.concat([data, next.chunk]);
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
        const where = path ? `${share}\\${path}` : share;
        for (let page = 0; ; page++) {
          if (page >= LISTING_LIMITS.maxPages) throw new Smb2LimitExceeded(`The SMB server's listing of ${where} did not end within ${LISTING_LIMITS.maxPages} pages`);
          const r = await s.conn.request(Command.QUERY_DIRECTORY, queryDirectoryRequest(dir.fileId, page === 0, outLen), {
            treeId: dir.treeId,
            accept: [Status.NO_MORE_FILES],
          });
          if (r.header.status === Status.NO_MORE_FILES) break;
          const entries = parseQueryDirectory(r.message);
          // A page without entries says nothing, and "more" after it could go on for ever (MS-SMB2: SUCCESS brings at least one).
          if (entries.length === 0) throw new Smb2LimitExceeded(`The SMB server sent an empty page in the listing of ${where}`);
          for (const e of entries) if (e.name !== "." && e.name !== "..") out.push(e);
          if (out.length > LISTING_LIMITS.maxEntries) throw new Smb2LimitExceeded(`The folder ${where} has more than ${LISTING_LIMITS.maxEntries} entries, more than Sluice lists in one folder`);
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
   * A stream of a file's bytes, paced by its consumer; the file is opened before this resolves.
   * `expectedSize` (from a directory listing) lets a small file come in one round trip.
   */
  async createReadStream(
    share: string,
    path: string,
    mapError: (e: Error) => Error = (e) => e,
    expectedSize?: number,
  ): Promise<Readable> {
    return openReadStream(this.sessionOps, share, path, mapError, expectedSize);
  }
}

function isSessionGone(e: unknown): boolean {
  return (
    e instanceof Smb2StatusError &&
    (e.status === Status.NETWORK_SESSION_EXPIRED || e.status === Status.USER_SESSION_DELETED)
  );
}

export { Smb2ConnectionLost, Smb2StatusError, Smb2Unreachable, dialectName };
export type { DirectoryEntry, ShareInfo, Smb2ClientOptions, Smb2ClientStats };
