/**
 * One TCP connection speaking SMB2 over direct TCP (port 445 framing): frames
 * messages, matches responses to requests by MessageId, tracks credits, and bounds
 * every request by a timeout. Once the session has keys it signs requests and checks
 * the signature of every reply, or encrypts requests and decrypts replies (TRANSFORM_HEADER);
 * a reply that fails either check is never used. It never reconnects; the client above
 * decides that.
 */
import { type Socket, connect } from "node:net";
import { TRANSFORM_PROTOCOL_ID, TransformError, type MessageCipher, type MessageSigner, type PreauthHash } from "./smb-crypto";
import { SmbBadSignatureError } from "./smb-errors";
import { Smb2FrameReader } from "./smb2-frame-reader";
import { Command, Flags, HEADER_SIZE, Status, decodeHeader, encodeHeader, nextCommandOffset, statusName, type Smb2Header } from "./smb2-messages";

/** The server answered with an NTSTATUS error. */
export class Smb2StatusError extends Error {
  constructor(
    readonly status: number,
    readonly command: number,
  ) {
    super(statusName(status));
    this.name = "Smb2StatusError";
  }
}

/** The TCP connection went away (reset, closed, or destroyed after a timeout). */
export class Smb2ConnectionLost extends Error {
  constructor(message = "SMB connection lost") {
    super(message);
    this.name = "Smb2ConnectionLost";
  }
}

/** Why a server could not be reached: the name, the port, or silence (smb-failure.ts words each). */
export type Smb2UnreachableReason = "host_not_found" | "connection_refused" | "timed_out";

/** Socket error codes by what they tell the user; anything else is a refused connection. */
const NO_SUCH_HOST = new Set(["ENOTFOUND", "EAI_AGAIN", "EAI_FAIL", "EAI_NONAME"]);
const NO_ANSWER = new Set(["ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "EHOSTDOWN"]);

function unreachableReason(code: string | undefined): Smb2UnreachableReason {
  if (code && NO_SUCH_HOST.has(code)) return "host_not_found";
  if (code && NO_ANSWER.has(code)) return "timed_out";
  return "connection_refused";
}

/** Connecting failed or the server did not answer in time. Not retried: the server is not there. */
export class Smb2Unreachable extends Error {
  constructor(
    message: string,
    readonly reason: Smb2UnreachableReason = "timed_out",
  ) {
    super(message);
    this.name = "Smb2Unreachable";
  }
}

export interface Smb2Response {
  header: Smb2Header;
  /** The whole message, header included (body offsets count from its start). */
  message: Buffer;
}

/** One request to send: its command, body, and how the answer is to be taken. */
export interface Smb2Request {
  command: number;
  body: Buffer;
  /** Bytes the answer may carry (reads): sets the credit charge. */
  payloadSize?: number;
  /** Statuses the caller handles itself instead of getting an Smb2StatusError. */
  accept?: readonly number[];
}

/** How a request went out, and so how its reply must come back. */
type Protection = "none" | "signed" | "encrypted";

interface Pending {
  resolve(r: Smb2Response): void;
  reject(e: Error): void;
  timer: NodeJS.Timeout;
  /** When the request fails whatever the server says meanwhile (Date.now() ms): STATUS_PENDING never moves it. */
  deadline: number;
  command: number;
  /** Statuses the caller handles itself instead of getting an Smb2StatusError. */
  accept: readonly number[];
  protection: Protection;
}

/**
 * Replies a server may send unsigned on a signed session (MS-SMB2 3.2.5.1.3): a session it no
 * longer knows has no key to sign with. Nothing in them is used but the status.
 */
const UNSIGNED_STATUSES: ReadonlySet<number> = new Set([Status.NETWORK_SESSION_EXPIRED, Status.USER_SESSION_DELETED]);

/**
 * A request's overall deadline, in timeouts: STATUS_PENDING restarts the wait for the final reply
 * (a busy server may take a while) but never past this, so a server that answers PENDING forever
 * fails the request (issue 34).
 */
export const REQUEST_DEADLINE_TIMEOUTS = 4;

/** Credits to ask for in every request, so multi-credit reads never starve. */
const CREDIT_REQUEST = 256;
const MAX_FRAME = 16 * 1024 * 1024;
/** The socket's read buffer: a 1 MB READ reply arrives in 16 socket reads. */
const READ_BUFFER = 64 * 1024;

export class Smb2Connection {
  private socket: Socket | undefined;
  private nextMessageId = 0n;
  private credits = 1;
  private creditWaiters: Array<() => void> = [];
  private pending = new Map<bigint, Pending>();
  private readonly frames = new Smb2FrameReader(
    MAX_FRAME,
    (frame) => this.onFrame(frame),
    () => this.fail(new Smb2ConnectionLost("Malformed SMB frame from server")),
  );
  private closedError: Error | undefined;
  private outgoing: Buffer[] = [];

  sessionId = 0n;
  /** When set, requests are signed and every reply must carry a good signature. */
  signer: MessageSigner | undefined;
  /** When set, requests on encrypted trees (or all, with encryptAll) go out in a TRANSFORM_HEADER. */
  cipher: MessageCipher | undefined;
  /** The session requires encryption (SESSION_FLAG_ENCRYPT_DATA). */
  encryptAll = false;
  /** Trees whose share requires encryption (SMB2_SHAREFLAG_ENCRYPT_DATA). */
  readonly encryptedTrees = new Set<number>();
  /** While set, NEGOTIATE and SESSION_SETUP messages are added to it (SMB 3.1.1 preauth integrity). */
  preauth: PreauthHash | undefined;
  supportsMultiCredit = false;
  /** Called for each STATUS_PENDING interim response (for diagnostics and tests). */
  onInterim: (() => void) | undefined;
  /** Called for each frame written (for diagnostics and tests). */
  onFrameSent: (() => void) | undefined;

  private constructor(private readonly timeoutMs: number) {}

  get alive(): boolean {
    return this.closedError === undefined;
  }

  /** `checkPeer` sees the address the socket reached and throws when it may not be used (SMB_ALLOWED_NETWORKS). */
  static open(host: string, port: number, timeoutMs: number, checkPeer?: (remoteAddress: string | undefined) => void): Promise<Smb2Connection> {
    const conn = new Smb2Connection(timeoutMs);
    return new Promise((resolve, reject) => {
      // The socket reads into one buffer for the connection's life (see Smb2FrameReader).
      const readBuffer = Buffer.allocUnsafe(READ_BUFFER);
      const onread = (n: number) => {
        conn.frames.push(readBuffer.subarray(0, n));
        return true; // never pause: replies are what requests wait for
      };
      const socket = connect({ host, port, onread: { buffer: readBuffer, callback: onread } });
      socket.setNoDelay(true);
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new Smb2Unreachable(`Timed out connecting to ${host}:${port} after ${timeoutMs} ms`, "timed_out"));
      }, timeoutMs);
      const onError = (err: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        socket.destroy();
        reject(new Smb2Unreachable(`Cannot connect to ${host}:${port}: ${err.code ?? err.message}`, unreachableReason(err.code)));
      };
      socket.once("error", onError);
      socket.once("connect", () => {
        clearTimeout(timer);
        socket.off("error", onError);
        try {
          checkPeer?.(socket.remoteAddress);
        } catch (error) {
          socket.destroy();
          reject(error);
          return;
        }
        conn.attach(socket);
        resolve(conn);
      });
    });
  }

  private attach(socket: Socket): void {
    this.socket = socket;
    socket.on("error", (err) => this.fail(new Smb2ConnectionLost(`SMB connection error: ${err.message}`)));
    socket.on("close", () => this.fail(new Smb2ConnectionLost()));
  }

  /** Ends the connection; pending requests are rejected. */
  destroy(reason: Error = new Smb2ConnectionLost("SMB connection closed")): void {
    this.fail(reason);
  }

  private fail(err: Error): void {
    if (this.closedError) return;
    this.closedError = err;
    this.frames.stop();
    this.socket?.destroy();
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.reject(err);
    }
    this.pending.clear();
    for (const w of this.creditWaiters.splice(0)) w();
  }

  /**
   * A frame holds one message, or a compound chain of them linked by NextCommand; or, on an
   * encrypted session, a TRANSFORM_HEADER whose plaintext is such a message or chain.
   */
  private onFrame(frame: Buffer): void {
    let encrypted = false;
    if (frame.length >= 4 && frame.readUInt32BE(0) === TRANSFORM_PROTOCOL_ID) {
      if (!this.cipher) {
        this.fail(new Smb2ConnectionLost("The SMB server sent an encrypted reply on a session without encryption"));
        return;
      }
      try {
        frame = this.cipher.decrypt(frame);
      } catch (e) {
        // Which request it answers is inside the ciphertext: none of them can be trusted now.
        const why = e instanceof TransformError ? e.message : String(e);
        this.fail(new SmbBadSignatureError(`SMB reply rejected: ${why}; nothing from it was used`));
        return;
      }
      encrypted = true;
    }
    for (let offset = 0; ; ) {
      const rest = frame.subarray(offset);
      const next = rest.length >= HEADER_SIZE ? nextCommandOffset(rest) : 0;
      if (next !== 0 && (next < HEADER_SIZE || next % 8 !== 0 || next >= rest.length)) {
        this.fail(new Smb2ConnectionLost("Malformed SMB compound response from server"));
        return;
      }
      this.onMessage(next ? rest.subarray(0, next) : rest, encrypted);
      if (next === 0 || this.closedError) return;
      offset += next;
    }
  }

  private onMessage(message: Buffer, encrypted: boolean): void {
    let header: Smb2Header;
    try {
      header = decodeHeader(message);
    } catch {
      this.fail(new Smb2ConnectionLost("The server is not speaking SMB2"));
      return;
    }
    this.credits += header.credits;
    for (const w of this.creditWaiters.splice(0)) w();
    const p = this.pending.get(header.messageId);
    if (!p) return; // e.g. an oplock break; we never ask for oplocks
    if (header.status === Status.PENDING && header.flags & Flags.ASYNC) {
      // Interim response: the real one follows with the same MessageId. Wait for it afresh, up to
      // the request's deadline. It carries nothing but that promise, so it is taken even unsigned.
      this.onInterim?.();
      clearTimeout(p.timer);
      p.timer = this.startTimer(p.command, p.deadline);
      return;
    }
    clearTimeout(p.timer);
    this.pending.delete(header.messageId);
    const untrusted = this.checkProtection(p, header, message, encrypted);
    if (untrusted) {
      p.reject(untrusted);
      return;
    }
    if (this.preauth && (header.command === Command.NEGOTIATE || (header.command === Command.SESSION_SETUP && header.status === Status.MORE_PROCESSING_REQUIRED))) {
      this.preauth.update(message);
    }
    if (header.status === Status.SUCCESS || p.accept.includes(header.status)) p.resolve({ header, message });
    else p.reject(new Smb2StatusError(header.status, header.command));
  }

  /** Why a reply may not be used (it came back less protected than its request went out, or its signature is wrong); undefined if it may. */
  private checkProtection(p: Pending, header: Smb2Header, message: Buffer, encrypted: boolean): Error | undefined {
    // Decryption already authenticated it.
    if (encrypted) return undefined;
    const what = `reply to SMB command ${header.command}`;
    if (p.protection === "encrypted") {
      return new SmbBadSignatureError(`SMB ${what} arrived unencrypted on an encrypted session; it was not used`);
    }
    const signed = (header.flags & Flags.SIGNED) !== 0;
    if (p.protection === "signed" && !signed && !UNSIGNED_STATUSES.has(header.status)) {
      return new SmbBadSignatureError(`SMB ${what} arrived unsigned on a signed session; it was not used`);
    }
    if (signed && this.signer && header.command !== Command.SESSION_SETUP && !this.signer.verify(message)) {
      return new SmbBadSignatureError(
        `SMB ${what} failed signature verification (changed on the way, or not from the server); it was not used`,
      );
    }
    return undefined;
  }

  /** The wait for a reply: a timeout's worth, or what is left before the request's deadline. */
  private startTimer(command: number, deadline: number): NodeJS.Timeout {
    const left = deadline - Date.now();
    const pastDeadline = left <= this.timeoutMs;
    return setTimeout(() => {
      // After a lost answer we can't know the server's state: drop the connection.
      const why = pastDeadline
        ? `SMB server gave no final answer within ${this.timeoutMs * REQUEST_DEADLINE_TIMEOUTS} ms (command ${command}; it kept saying STATUS_PENDING)`
        : `SMB server did not answer within ${this.timeoutMs} ms (command ${command})`;
      this.fail(new Smb2Unreachable(why, "timed_out"));
    }, Math.max(0, Math.min(this.timeoutMs, left)));
  }

  private async acquireCredits(n: number): Promise<void> {
    const deadline = Date.now() + this.timeoutMs;
    while (this.credits < n) {
      if (this.closedError) throw this.closedError;
      if (Date.now() > deadline) throw new Smb2Unreachable("SMB server granted no credits in time");
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 50);
        this.creditWaiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    this.credits -= n;
  }

  /** Credits in hand; reads size themselves by this. */
  get availableCredits(): number {
    return this.credits;
  }

  async request(
    command: number,
    body: Buffer,
    opts: { treeId?: number; payloadSize?: number; accept?: readonly number[] } = {},
  ): Promise<Smb2Response> {
    const [response] = await this.compound([{ command, body, payloadSize: opts.payloadSize, accept: opts.accept }], opts.treeId ?? 0);
    return response;
  }

  /**
   * Related operations in one frame and one round trip (MS-SMB2 3.2.4.1.4): the
   * requests after a CREATE act on the file it opened when they name RELATED_FILE_ID.
   * Resolves with every answer in order; rejects with the first failure (after a failed
   * CREATE the server fails the rest with the same status). A single request is a chain of one.
   */
  async compound(requests: Smb2Request[], treeId: number): Promise<Smb2Response[]> {
    if (this.closedError) throw this.closedError;
    const setup = requests.some((r) => r.command === Command.NEGOTIATE || r.command === Command.SESSION_SETUP);
    const protection: Protection =
      setup ? "none" : this.cipher && (this.encryptAll || this.encryptedTrees.has(treeId)) ? "encrypted" : this.signer ? "signed" : "none";
    const charges = requests.map((r) => this.creditCharge(r.payloadSize));
    await this.acquireCredits(charges.reduce((a, b) => a + b, 0));
    if (this.closedError) throw this.closedError;
    const messages: Buffer[] = [];
    const answers: Array<Promise<Smb2Response>> = [];
    requests.forEach((req, i) => {
      const last = i === requests.length - 1;
      const messageId = this.nextMessageId;
      this.nextMessageId += BigInt(charges[i]);
      const header = encodeHeader({
        creditCharge: this.supportsMultiCredit ? charges[i] : 0,
        status: 0,
        command: req.command,
        credits: CREDIT_REQUEST,
        flags: i > 0 ? Flags.RELATED_OPERATIONS : 0,
        messageId,
        treeId,
        sessionId: this.sessionId,
      });
      // Every message but the last is padded to 8 bytes, and NextCommand points past the padding.
      const length = HEADER_SIZE + req.body.length;
      const padded = last ? length : Math.ceil(length / 8) * 8;
      const message = Buffer.alloc(padded);
      header.copy(message, 0);
      req.body.copy(message, HEADER_SIZE);
      if (!last) message.writeUInt32LE(padded, 20);
      // Each message of a chain is signed on its own, padding included. Encrypted ones are not signed.
      if (protection === "signed") this.signer!.sign(message);
      if (this.preauth && setup) this.preauth.update(message);
      messages.push(message);
      const deadline = Date.now() + this.timeoutMs * REQUEST_DEADLINE_TIMEOUTS;
      answers.push(
        new Promise<Smb2Response>((resolve, reject) => {
          this.pending.set(messageId, {
            resolve,
            reject,
            command: req.command,
            accept: req.accept ?? [],
            protection,
            deadline,
            timer: this.startTimer(req.command, deadline),
          });
        }),
      );
    });
    // The whole chain goes in one TRANSFORM_HEADER when encrypted.
    const parts = protection === "encrypted" ? this.cipher!.encrypt(messages) : messages;
    const total = parts.reduce((n, m) => n + m.length, 0);
    const frame = Buffer.alloc(4);
    frame.writeUInt32BE(total, 0);
    this.enqueue(Buffer.concat([frame, ...parts], 4 + total));
    this.onFrameSent?.();
    const settled = await Promise.allSettled(answers);
    const failed = settled.find((r): r is PromiseRejectedResult => r.status === "rejected");
    if (failed) throw failed.reason;
    return settled.map((r) => (r as PromiseFulfilledResult<Smb2Response>).value);
  }

  /**
   * Frames queued in one turn of the event loop go out in one socket write: with many
   * files in flight, requests come in bursts, and each write costs a system call and a
   * wake-up of the server.
   */
  private enqueue(frame: Buffer): void {
    this.outgoing.push(frame);
    if (this.outgoing.length > 1) return;
    setImmediate(() => {
      const frames = this.outgoing;
      this.outgoing = [];
      if (this.closedError) return;
      this.socket!.write(frames.length === 1 ? frames[0] : Buffer.concat(frames));
    });
  }

  private creditCharge(payloadSize: number | undefined): number {
    return this.supportsMultiCredit ? Math.max(1, Math.ceil((payloadSize ?? 0) / 65536)) : 1;
  }
}
