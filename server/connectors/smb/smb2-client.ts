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
  RELATED_FILE_ID,
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
import { RpcPipe, type PipeTransport, type RpcInterface, type RpcLimits } from "./dcerpc";
import { SRVSVC, listSharesOn, shareDescriptorOn, type ShareInfo } from "./srvsvc";
import { OWNER_DACL, QUERY_INFO, READ_CONTROL, STATUS_BUFFER_TOO_SMALL, parseQueryInfo, querySecurityRequest, requiredSize } from "./smb2-query-info";

/** A security descriptor larger than this is refused (real ones are a few hundred bytes). */
const MAX_DESCRIPTOR_BYTES = 1024 * 1024;
/** The first QUERY_INFO buffer: room for a DACL of a few hundred entries. */
const FIRST_DESCRIPTOR_BYTES = 16 * 1024;

const DEFAULT_TIMEOUT_MS = 10_000;

/**
 * Bounds on the loops a server drives (issue 34): a folder's entries and its listing's pages
 * ("more" rounds); a pipe reply's bytes and reads are bounded in dcerpc.ts. Real servers stay far
 * below them: a 64 KB page holds at least ~110 entries, so 100 000 entries take under 1 000 pages.
 */
export const LISTING_LIMITS = { maxEntries: 100_000, maxPages: 4_096 };

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
  /** CLOSEs sent without waiting for their reply (a finished listing's): close() waits for them before the connection goes. */
  private readonly outstandingCloses = new Set<Promise<void>>();
  readonly timeoutMs: number;
  readonly stats: Smb2ClientStats = {
    sessions: 0,
    closesInFlight: 0,
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
    // The server keeps a handle whose CLOSE was cut off until its session times out.
    await Promise.all([...this.outstandingCloses]);
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

  /**
   * A CLOSE sent without waiting for its reply: a listing that reached its end needs nothing
   * more of the handle, and waiting cost one round trip per folder of a walk. It takes its
   * credits like any request (in order, before the next request's); a failure only makes a
   * debug line, never an error of the walk. close() waits for every one still out.
   */
  private closeWithoutWaiting(s: Session, treeId: number, fileId: Buffer): void {
    if (!s.conn.alive) return;
    const sent: Promise<void> = s.conn.request(Command.CLOSE, closeRequest(fileId), { treeId }).then(
      () => undefined,
      (error: Error) => this.opts.debug?.(`SMB CLOSE of a listed folder failed: ${error.message}`),
    );
    this.outstandingCloses.add(sent);
    this.stats.closesInFlight++;
    void sent.finally(() => {
      this.outstandingCloses.delete(sent);
      this.stats.closesInFlight--;
    });
  }

  /** Share names, types and comments via SRVSVC NetrShareEnum on IPC$. */
  listShares(): Promise<ShareInfo[]> {
    return this.withPipe("srvsvc", SRVSVC, (pipe) => listSharesOn(pipe, this.opts.serverName ?? this.opts.host));
  }

  /** A share's self-relative security descriptor (NetrShareGetInfo level 502); null when the server keeps none. */
  shareDescriptor(share: string): Promise<Buffer | null> {
    return this.withPipe("srvsvc", SRVSVC, (pipe) => shareDescriptorOn(pipe, this.opts.serverName ?? this.opts.host, share));
  }

  /**
   * Opens a named pipe on IPC$, binds `iface` on it and runs `fn` with it; the pipe is closed after.
   * Reads of a long reply go through RpcPipe, which bounds them.
   */
  withPipe<T>(name: string, iface: RpcInterface, fn: (pipe: RpcPipe) => Promise<T>, limits?: RpcLimits): Promise<T> {
    return this.run(async (s) => {
      const handle = await this.open(s, "IPC$", name, Access.PIPE_READ_WRITE, 0);
      try {
        const maxOut = Math.min(65536, s.negotiated.maxTransactSize);
        const opts = { treeId: handle.treeId, accept: [Status.BUFFER_OVERFLOW] };
        const transport: PipeTransport = {
          transceive: async (pdu) =>
            Buffer.from(parseIoctl((await s.conn.request(Command.IOCTL, ioctlRequest(FSCTL_PIPE_TRANSCEIVE, handle.fileId, pdu, maxOut), opts)).message)),
          read: async () => Buffer.from(parseRead((await s.conn.request(Command.READ, readRequest(handle.fileId, 0, maxOut), opts)).message)),
        };
        const pipe = new RpcPipe(transport, iface, limits);
        await pipe.bind();
        return await fn(pipe);
      } finally {
        await this.closeHandle(s, handle.treeId, handle.fileId);
      }
    });
  }

  /**
   * A file's or folder's self-relative security descriptor (owner and DACL: who may read needs no group), opened with
   * READ_CONTROL only: CREATE, QUERY_INFO and CLOSE in one compound round trip, so reading every
   * file's descriptor at each run costs one round trip per file. A descriptor larger than the first
   * buffer is asked for again at the size the server names (at most MAX_DESCRIPTOR_BYTES).
   */
  querySecurity(share: string, path: string): Promise<Buffer> {
    return this.run(async (s) => {
      const treeId = await this.tree(s, share);
      const ask = async (size: number) => {
        const [, info] = await s.conn.compound(
          [
            { command: Command.CREATE, body: createRequest(path, READ_CONTROL, 0) },
            { command: QUERY_INFO, body: querySecurityRequest(RELATED_FILE_ID, size, OWNER_DACL), payloadSize: size, accept: [STATUS_BUFFER_TOO_SMALL] },
            { command: Command.CLOSE, body: closeRequest(RELATED_FILE_ID) },
          ],
          treeId,
        );
        return info;
      };
      const first = await ask(FIRST_DESCRIPTOR_BYTES);
      if (first.header.status !== STATUS_BUFFER_TOO_SMALL) return parseQueryInfo(first.message);
      const wanted = requiredSize(first.message);
      if (wanted === undefined || wanted <= FIRST_DESCRIPTOR_BYTES || wanted > Math.min(MAX_DESCRIPTOR_BYTES, s.negotiated.maxTransactSize)) {
        throw new Smb2StatusError(STATUS_BUFFER_TOO_SMALL, QUERY_INFO);
      }
      const second = await ask(wanted);
      if (second.header.status === STATUS_BUFFER_TOO_SMALL) throw new Smb2StatusError(STATUS_BUFFER_TOO_SMALL, QUERY_INFO);
      return parseQueryInfo(second.message);
    });
  }

  /** Entries of a directory (`.` and `..` left out); `path` uses backslashes, "" for the share root. */
  listDirectory(share: string, path: string): Promise<DirectoryEntry[]> {
    return this.run(async (s) => {
      const dir = await this.open(s, share, path, Access.GENERIC_READ_FILE, CreateOptions.DIRECTORY_FILE);
      let listed = false;
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
        listed = true;
        return out;
      } finally {
        // At the listing's end (NO_MORE_FILES) the CLOSE goes without its round trip; a listing that failed waits for it as before.
        if (listed) this.closeWithoutWaiting(s, dir.treeId, dir.fileId);
        else await this.closeHandle(s, dir.treeId, dir.fileId);
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

export { RpcPipe, Smb2ConnectionLost, Smb2StatusError, Smb2Unreachable, dialectName };
export type { DirectoryEntry, ShareInfo, Smb2ClientOptions, Smb2ClientStats };
