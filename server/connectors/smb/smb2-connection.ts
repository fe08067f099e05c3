/**
 * One TCP connection speaking SMB2 over direct TCP (port 445 framing): frames
 * messages, matches responses to requests by MessageId, tracks credits, signs
 * when asked, and bounds every request by a timeout. It never reconnects; the
 * client above decides that.
 */
import { createHmac } from "node:crypto";
import { Socket, connect } from "node:net";
import { Command, Flags, Status, decodeHeader, encodeHeader, statusName, type Smb2Header } from "./smb2-messages";

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

/** Connecting failed or the server did not answer in time. Not retried: the server is not there. */
export class Smb2Unreachable extends Error {
  constructor(message: string) {
    super(message);
    this.name = "Smb2Unreachable";
  }
}

export interface Smb2Response {
  header: Smb2Header;
  /** The whole message, header included (body offsets count from its start). */
  message: Buffer;
}

interface Pending {
  resolve(r: Smb2Response): void;
  reject(e: Error): void;
  timer: NodeJS.Timeout;
  command: number;
  /** Statuses the caller handles itself instead of getting an Smb2StatusError. */
  accept: readonly number[];
}

/** Credits to ask for in every request, so multi-credit reads never starve. */
const CREDIT_REQUEST = 256;
const MAX_FRAME = 16 * 1024 * 1024;

export class Smb2Connection {
  private socket: Socket | undefined;
  private nextMessageId = 0n;
  private credits = 1;
  private creditWaiters: Array<() => void> = [];
  private pending = new Map<bigint, Pending>();
  private chunks: Buffer[] = [];
  private buffered = 0;
  private closedError: Error | undefined;

  sessionId = 0n;
  /** When set, every request is signed with HMAC-SHA256 (SMB 2.x signing). */
  signingKey: Buffer | undefined;
  supportsMultiCredit = false;
  /** Called for each STATUS_PENDING interim response (for diagnostics and tests). */
  onInterim: (() => void) | undefined;

  private constructor(private readonly timeoutMs: number) {}

  get alive(): boolean {
    return this.closedError === undefined;
  }

  static open(host: string, port: number, timeoutMs: number): Promise<Smb2Connection> {
    const conn = new Smb2Connection(timeoutMs);
    return new Promise((resolve, reject) => {
      const socket = connect({ host, port });
      socket.setNoDelay(true);
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new Smb2Unreachable(`Timed out connecting to ${host}:${port} after ${timeoutMs} ms`));
      }, timeoutMs);
      const onError = (err: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        socket.destroy();
        reject(new Smb2Unreachable(`Cannot connect to ${host}:${port}: ${err.code ?? err.message}`));
      };
      socket.once("error", onError);
      socket.once("connect", () => {
        clearTimeout(timer);
        socket.off("error", onError);
        conn.attach(socket);
        resolve(conn);
      });
    });
  }

  private attach(socket: Socket): void {
    this.socket = socket;
    socket.on("data", (d: Buffer) => this.onData(d));
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
    this.socket?.destroy();
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.reject(err);
    }
    this.pending.clear();
    for (const w of this.creditWaiters.splice(0)) w();
  }

  private onData(d: Buffer): void {
    this.chunks.push(d);
    this.buffered += d.length;
    while (this.buffered >= 4) {
      const head = this.chunks[0].length >= 4 ? this.chunks[0] : Buffer.concat(this.chunks);
      // Direct TCP transport: a zero byte, then a 24-bit big-endian length.
      const len = head.readUInt32BE(0) & 0xffffff;
      if (head[0] !== 0 || len > MAX_FRAME) {
        this.fail(new Smb2ConnectionLost("Malformed SMB frame from server"));
        return;
      }
      if (this.buffered < 4 + len) return;
      const all = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks);
      const frame = all.subarray(4, 4 + len);
      const rest = all.subarray(4 + len);
      this.chunks = rest.length ? [rest] : [];
      this.buffered = rest.length;
      this.onMessage(frame);
      if (this.closedError) return;
    }
  }

  private onMessage(message: Buffer): void {
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
      // Interim response: the real one follows with the same MessageId. Give it a fresh timeout.
      this.onInterim?.();
      clearTimeout(p.timer);
      p.timer = this.startTimer(p.command);
      return;
    }
    clearTimeout(p.timer);
    this.pending.delete(header.messageId);
    if (header.status === Status.SUCCESS || p.accept.includes(header.status)) p.resolve({ header, message });
    else p.reject(new Smb2StatusError(header.status, header.command));
  }

  private startTimer(command: number): NodeJS.Timeout {
    return setTimeout(() => {
      // After a lost answer we can't know the server's state: drop the connection.
      this.fail(new Smb2Unreachable(`SMB server did not answer within ${this.timeoutMs} ms (command ${command})`));
    }, this.timeoutMs);
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
    if (this.closedError) throw this.closedError;
    const charge = this.supportsMultiCredit ? Math.max(1, Math.ceil((opts.payloadSize ?? 0) / 65536)) : 1;
    await this.acquireCredits(charge);
    if (this.closedError) throw this.closedError;
    const messageId = this.nextMessageId;
    this.nextMessageId += BigInt(charge);
    const header = encodeHeader({
      creditCharge: this.supportsMultiCredit ? charge : 0,
      status: 0,
      command,
      credits: CREDIT_REQUEST,
      flags: 0,
      messageId,
      treeId: opts.treeId ?? 0,
      sessionId: this.sessionId,
    });
    const message = Buffer.concat([header, body]);
    if (this.signingKey && command !== Command.NEGOTIATE && command !== Command.SESSION_SETUP) {
      message.writeUInt32LE(message.readUInt32LE(16) | Flags.SIGNED, 16);
      createHmac("sha256", this.signingKey).update(message).digest().copy(message, 48, 0, 16);
    }
    const frame = Buffer.alloc(4);
    frame.writeUInt32BE(message.length, 0);
    return new Promise<Smb2Response>((resolve, reject) => {
      this.pending.set(messageId, {
        resolve,
        reject,
        command,
        accept: opts.accept ?? [],
        timer: this.startTimer(command),
      });
      this.socket!.write(Buffer.concat([frame, message]));
    });
  }
}
