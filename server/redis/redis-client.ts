import crypto from "node:crypto";
import { EventEmitter } from "node:events";
import net from "node:net";
import { Readable } from "node:stream";
import tls from "node:tls";

/**
 * A small Redis client (RESP2 over one socket, pipelined) that satisfies BullMQ's
 * IRedisClient, so the queue needs no ioredis/node-redis package. It also serves
 * Sluice's own keys (locks, rate-limit counts). Reconnects with a 1 s backoff;
 * commands sent while disconnected wait for the connection.
 */
type Arg = string | number | Buffer;
type Reply = string | number | null | Error | Reply[];
interface Pending {
  resolve(value: Reply): void;
  reject(error: Error): void;
}

export interface RedisClientOptions {
  url: string;
  connectionName?: string;
  /** A command sent while Redis is unreachable fails after this long; unset: it waits for the connection. */
  offlineTimeoutMs?: number;
}

export class RedisClient extends EventEmitter {
  status: string = "wait";
  readonly isCluster = false;
  readonly options: Record<string, unknown>;
  private socket: net.Socket | null = null;
  private readonly pending: Pending[] = [];
  private waiting: Array<() => void> = [];
  private buffer: Buffer = Buffer.alloc(0);
  private closing = false;
  private readonly scripts = new Map<string, { sha: string; lua: string; numberOfKeys: number }>();
  private readonly target: URL;
  /** Channels of a connection in subscribe mode (it then carries nothing else); re-subscribed after a reconnect. */
  private readonly channels = new Set<string>();
  private subscriber = false;

  constructor(private readonly opts: RedisClientOptions) {
    super();
    this.target = new URL(opts.url);
    this.options = {
      host: this.target.hostname,
      port: Number(this.target.port || 6379),
      db: Number(this.target.pathname.slice(1) || 0),
      maxRetriesPerRequest: null,
      connectionName: opts.connectionName,
    };
    this.setMaxListeners(100);
    // Connection errors are retried; an unhandled "error" event would crash the process.
    this.on("error", () => undefined);
  }

  connect(): Promise<void> {
    if (this.status === "ready") return Promise.resolve();
    const ready = new Promise<void>((resolve, reject) => {
      const onReady = () => {
        this.off("error", onError);
        resolve();
      };
      const onError = (error: Error) => {
        if (this.status === "end") {
          this.off("ready", onReady);
          reject(error);
        }
      };
      this.once("ready", onReady);
      this.on("error", onError);
    });
    if (this.status === "wait" || this.status === "end") {
      this.closing = false;
      this.open();
    }
    return ready;
  }

  private open(): void {
    this.status = "connecting";
    const port = Number(this.target.port || 6379);
    const host = this.target.hostname.replace(/^\[|\]$/g, "");
    const socket =
      this.target.protocol === "rediss:"
        ? // SNI carries host names only (RFC 6066); the certificate is still checked against an IP.
          tls.connect({ host, port, ...(net.isIP(host) ? {} : { servername: host }) })
        : net.connect({ host, port });
    this.socket = socket;
    socket.setNoDelay(true);
    socket.on(this.target.protocol === "rediss:" ? "secureConnect" : "connect", () => void this.handshake());
    socket.on("data", (chunk: Buffer) => this.onData(chunk));
    socket.on("error", (error) => this.emit("error", explainTlsError(error)));
    socket.on("close", () => this.onClose(socket));
  }

  private async handshake(): Promise<void> {
    try {
      const user = decodeURIComponent(this.target.username);
      const password = decodeURIComponent(this.target.password);
      if (password) await this.raw(user ? ["AUTH", user, password] : ["AUTH", password]);
      const db = Number(this.target.pathname.slice(1) || 0);
      if (db) await this.raw(["SELECT", db]);
      const name = this.options.connectionName as string | undefined;
      if (name) await this.raw(["CLIENT", "SETNAME", name]);
      for (const channel of this.channels) await this.raw(["SUBSCRIBE", channel]);
      this.status = "ready";
      this.emit("connect");
      this.emit("ready");
      const waiting = this.waiting;
      this.waiting = [];
      waiting.forEach((go) => go());
    } catch (error) {
      this.emit("error", error as Error);
      this.socket?.destroy();
    }
  }

  private onClose(socket: net.Socket): void {
    if (socket !== this.socket) return;
    this.socket = null;
    this.buffer = Buffer.alloc(0);
    for (const p of this.pending.splice(0)) p.reject(new Error("Connection is closed."));
    this.emit("close");
    if (this.closing) {
      this.status = "end";
      for (const go of this.waiting.splice(0)) go();
      this.emit("end");
      return;
    }
    this.status = "reconnecting";
    this.emit("reconnecting");
    setTimeout(() => {
      if (!this.closing) this.open();
    }, 1000).unref();
  }

  /** Sends one command on the socket as it is now (used by the handshake too). */
  private raw(args: Arg[]): Promise<Reply> {
    if (!this.socket) return Promise.reject(new Error("Connection is closed."));
    return new Promise<Reply>((resolve, reject) => {
      this.pending.push({ resolve, reject });
      this.socket!.write(encode(args));
    });
  }

  /** Sends a command once connected; an error reply rejects. */
  async call(...args: Arg[]): Promise<any> {
    if (this.status === "wait") void this.connect().catch(() => undefined);
    if (this.status === "end") throw new Error("Connection is closed.");
    if (this.status !== "ready") await this.whenReady();
    if (this.status !== "ready") throw new Error("Connection is closed.");
    const reply = await this.raw(args);
    if (reply instanceof Error) throw reply;
    return reply;
  }

  private whenReady(): Promise<void> {
    const limit = this.opts.offlineTimeoutMs;
    return new Promise<void>((resolve, reject) => {
      if (limit === undefined) return void this.waiting.push(resolve);
      const go = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiting = this.waiting.filter((w) => w !== go);
        reject(new Error(`Redis at ${this.target.host} is unreachable`));
      }, limit);
      this.waiting.push(go);
    });
  }

  private onData(chunk: Buffer): void {
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk;
    for (;;) {
      const parsed = parseReply(this.buffer, 0);
      if (!parsed) return;
      this.buffer = this.buffer.subarray(parsed.end);
      const value = parsed.value;
      if (this.subscriber && Array.isArray(value) && value[0] === "message") {
        this.emit("message", value[1], value[2]);
        continue;
      }
      const next = this.pending.shift();
      next?.resolve(value);
    }
  }

  /** Puts this connection in subscribe mode; messages arrive as "message" events (channel, payload). */
  async subscribe(channel: string): Promise<void> {
    if (this.channels.has(channel)) return;
    this.subscriber = true;
    this.channels.add(channel);
    await this.call("SUBSCRIBE", channel);
  }

  async unsubscribe(channel: string): Promise<void> {
    if (!this.channels.delete(channel)) return;
    await this.call("UNSUBSCRIBE", channel);
  }

  disconnect(): void {
    this.closing = true;
    if (this.socket) this.socket.destroy();
    else if (this.status !== "end") {
      this.status = "end";
      for (const go of this.waiting.splice(0)) go();
      this.emit("end");
    }
  }

  async quit(): Promise<string> {
    this.closing = true;
    if (!this.socket || this.status !== "ready") {
      this.disconnect();
      return "OK";
    }
    const ended = new Promise<void>((resolve) => this.once("end", () => resolve()));
    await this.raw(["QUIT"]).catch(() => undefined);
    this.socket?.end();
    await ended;
    return "OK";
  }

  duplicate(overrides: { connectionName?: string } = {}): RedisClient {
    return new RedisClient({ ...this.opts, connectionName: overrides.connectionName ?? this.opts.connectionName });
  }

  // ---- Lua scripts (BullMQ registers its scripts by name) ----

  defineCommand(name: string, definition: { numberOfKeys: number; lua: string }): void {
    const sha = crypto.createHash("sha1").update(definition.lua).digest("hex");
    this.scripts.set(name, { sha, lua: definition.lua, numberOfKeys: definition.numberOfKeys });
    (this as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => this.runCommand(name, args);
  }

  scriptArgs(name: string, args: unknown[]): { sha: string; lua: string; argv: Arg[] } {
    const script = this.scripts.get(name);
    if (!script) throw new Error(`unknown script command ${name}`);
    const flat = (args.length === 1 && Array.isArray(args[0]) ? args[0] : args) as unknown[];
    const argv = flat.map((a) => (Buffer.isBuffer(a) ? a : a === undefined || a === null ? "" : String(a)));
    return { sha: script.sha, lua: script.lua, argv: [script.numberOfKeys, ...argv] };
  }

  async runCommand(name: string, args: unknown[]): Promise<any> {
    const { sha, lua, argv } = this.scriptArgs(name, args);
    try {
      return await this.call("EVALSHA", sha, ...argv);
    } catch (error) {
      if (!String((error as Error).message).startsWith("NOSCRIPT")) throw error;
      return this.call("EVAL", lua, ...argv);
    }
  }

  async loadScript(name: string): Promise<void> {
    const script = this.scripts.get(name);
    if (script) await this.call("SCRIPT", "LOAD", script.lua);
  }

  multi(): RedisBatch {
    return new RedisBatch(this, true);
  }

  pipeline(): RedisBatch {
    return new RedisBatch(this, false);
  }

  // ---- the commands BullMQ (and Sluice) use ----

  async hgetall(key: string): Promise<Record<string, string>> {
    return toObject(await this.call("HGETALL", key));
  }
  hget(key: string, field: string): Promise<string | null> {
    return this.call("HGET", key, field);
  }
  hmget(key: string, ...fields: string[]): Promise<(string | null)[]> {
    return this.call("HMGET", key, ...fields);
  }
  hset(key: string, data: Record<string, string | number>): Promise<number> {
    return this.call("HSET", key, ...Object.entries(data).flat());
  }
  hdel(key: string, ...fields: string[]): Promise<number> {
    return this.call("HDEL", key, ...fields);
  }
  hexists(key: string, field: string): Promise<number> {
    return this.call("HEXISTS", key, field);
  }
  get(key: string): Promise<string | null> {
    return this.call("GET", key);
  }
  set(key: string, value: string | number, options: { PX?: number; EX?: number; NX?: boolean } = {}): Promise<string | null> {
    const extra: Arg[] = [];
    if (options.PX !== undefined) extra.push("PX", options.PX);
    if (options.EX !== undefined) extra.push("EX", options.EX);
    if (options.NX) extra.push("NX");
    return this.call("SET", key, value, ...extra);
  }
  del(...keys: string[]): Promise<number> {
    return keys.length ? this.call("DEL", ...keys) : Promise.resolve(0);
  }
  zrange(key: string, start: number, end: number, options: { WITHSCORES?: boolean } = {}): Promise<string[]> {
    return this.call("ZRANGE", key, start, end, ...(options.WITHSCORES ? ["WITHSCORES"] : []));
  }
  zrevrange(key: string, start: number, end: number, options: { WITHSCORES?: boolean } = {}): Promise<string[]> {
    return this.call("ZREVRANGE", key, start, end, ...(options.WITHSCORES ? ["WITHSCORES"] : []));
  }
  zcard(key: string): Promise<number> {
    return this.call("ZCARD", key);
  }
  zscore(key: string, member: string): Promise<string | null> {
    return this.call("ZSCORE", key, member);
  }
  lrange(key: string, start: number, end: number): Promise<string[]> {
    return this.call("LRANGE", key, start, end);
  }
  llen(key: string): Promise<number> {
    return this.call("LLEN", key);
  }
  ltrim(key: string, start: number, end: number): Promise<string> {
    return this.call("LTRIM", key, start, end);
  }
  lpos(key: string, value: string): Promise<number | null> {
    return this.call("LPOS", key, value);
  }
  smembers(key: string): Promise<string[]> {
    return this.call("SMEMBERS", key);
  }
  xadd(key: string, id: string, fields: Record<string, string | number>, options: { MAXLEN?: number; approximate?: boolean } = {}): Promise<string> {
    const trim: Arg[] = options.MAXLEN !== undefined ? ["MAXLEN", ...(options.approximate ? ["~"] : []), options.MAXLEN] : [];
    return this.call("XADD", key, ...trim, id, ...Object.entries(fields).flat());
  }
  xread(streams: { key: string; id: string }[], options: { BLOCK?: number; COUNT?: number } = {}): Promise<any> {
    const extra: Arg[] = [];
    if (options.BLOCK !== undefined) extra.push("BLOCK", options.BLOCK);
    if (options.COUNT !== undefined) extra.push("COUNT", options.COUNT);
    return this.call("XREAD", ...extra, "STREAMS", ...streams.map((s) => s.key), ...streams.map((s) => s.id));
  }
  xtrim(key: string, strategy: "MAXLEN", threshold: number, options: { approximate?: boolean } = {}): Promise<number> {
    return this.call("XTRIM", key, strategy, ...(options.approximate ? ["~"] : []), threshold);
  }
  async bzpopmin(key: string, timeout: number): Promise<[string, string, string] | null> {
    return this.call("BZPOPMIN", key, timeout);
  }
  info(): Promise<string> {
    return this.call("INFO");
  }
  clientSetName(name: string): Promise<any> {
    this.options.connectionName = name;
    return this.call("CLIENT", "SETNAME", name);
  }
  clientList(): Promise<string> {
    return this.call("CLIENT", "LIST");
  }
  clientInfo(): Promise<string> {
    return this.call("CLIENT", "INFO");
  }
  scan(cursor: string | number, options: { MATCH?: string; COUNT?: number } = {}): Promise<[string, string[]]> {
    const extra: Arg[] = [];
    if (options.MATCH) extra.push("MATCH", options.MATCH);
    if (options.COUNT) extra.push("COUNT", options.COUNT);
    return this.call("SCAN", cursor, ...extra);
  }
  scanStream(options: { match: string; count?: number }): Readable {
    const self = this;
    return Readable.from(
      (async function* () {
        let cursor = "0";
        do {
          const [next, keys] = await self.scan(cursor, { MATCH: options.match, COUNT: options.count });
          cursor = next;
          if (keys.length) yield keys;
        } while (cursor !== "0");
      })(),
      { objectMode: true },
    );
  }
}

/** MULTI/EXEC (atomic) or a plain pipeline: commands are queued and sent together by exec(). */
export class RedisBatch {
  private readonly commands: Arg[][] = [];
  /** Replies turned into what ioredis gives (HGETALL: an object), by command index. */
  private readonly asObject = new Set<number>();
  private readonly scriptNames = new Set<string>();

  constructor(
    private readonly client: RedisClient,
    private readonly atomic: boolean,
  ) {}

  private add(...args: Arg[]): this {
    this.commands.push(args);
    return this;
  }
  hgetall(key: string): this {
    this.asObject.add(this.commands.length);
    return this.add("HGETALL", key);
  }
  hset(key: string, data: Record<string, string | number>): this {
    return this.add("HSET", key, ...Object.entries(data).flat());
  }
  hscan(key: string, cursor: string | number, options: { COUNT?: number } = {}): this {
    return this.add("HSCAN", key, cursor, ...(options.COUNT ? ["COUNT", options.COUNT] : []));
  }
  smembers(key: string): this {
    return this.add("SMEMBERS", key);
  }
  sscan(key: string, cursor: string | number, options: { COUNT?: number } = {}): this {
    return this.add("SSCAN", key, cursor, ...(options.COUNT ? ["COUNT", options.COUNT] : []));
  }
  zrange(key: string, start: number, end: number): this {
    return this.add("ZRANGE", key, start, end);
  }
  lrange(key: string, start: number, end: number): this {
    return this.add("LRANGE", key, start, end);
  }
  llen(key: string): this {
    return this.add("LLEN", key);
  }
  del(...keys: string[]): this {
    return this.add("DEL", ...keys);
  }
  runCommand(name: string, args: unknown[]): this {
    const { sha, argv } = this.client.scriptArgs(name, args);
    this.scriptNames.add(name);
    return this.add("EVALSHA", sha, ...argv);
  }

  async exec(): Promise<[Error | null, any][] | null> {
    // EVALSHA inside MULTI cannot fall back to EVAL: load the scripts first.
    for (const name of this.scriptNames) await this.client.loadScript(name);
    if (!this.atomic) {
      const settled = await Promise.allSettled(this.commands.map((args) => this.client.call(...args)));
      return settled.map((s, i) => (s.status === "fulfilled" ? [null, this.shape(i, s.value)] : [s.reason as Error, null]));
    }
    const sent = [this.client.call("MULTI"), ...this.commands.map((args) => this.client.call(...args).catch((e: Error) => e))];
    const exec = this.client.call("EXEC");
    await Promise.all(sent);
    const replies = (await exec) as Reply[] | null;
    if (replies === null) return null;
    return replies.map((r, i) => (r instanceof Error ? [r, null] : [null, this.shape(i, r)]));
  }

  private shape(index: number, reply: Reply): unknown {
    return this.asObject.has(index) ? toObject(reply) : reply;
  }
}

function toObject(reply: Reply): Record<string, string> {
  const out: Record<string, string> = {};
  const list = (reply ?? []) as string[];
  for (let i = 0; i + 1 < list.length; i += 2) out[list[i]] = list[i + 1];
  return out;
}

function encode(args: Arg[]): Buffer {
  const parts: Buffer[] = [Buffer.from(`*${args.length}\r\n`)];
  for (const arg of args) {
    const bytes = Buffer.isBuffer(arg) ? arg : Buffer.from(String(arg));
    parts.push(Buffer.from(`$${bytes.length}\r\n`), bytes, Buffer.from("\r\n"));
  }
  return Buffer.concat(parts);
}

/** Parses one RESP2 reply at offset; null when the buffer does not hold all of it yet. */
function parseReply(buf: Buffer, offset: number): { value: Reply; end: number } | null {
  if (offset >= buf.length) return null;
  const lineEnd = buf.indexOf("\r\n", offset);
  if (lineEnd < 0) return null;
  const type = String.fromCharCode(buf[offset]);
  const line = buf.toString("utf8", offset + 1, lineEnd);
  const next = lineEnd + 2;
  switch (type) {
    case "+":
      return { value: line, end: next };
    case "-":
      return { value: new Error(line), end: next };
    case ":":
      return { value: Number(line), end: next };
    case "$": {
      const length = Number(line);
      if (length < 0) return { value: null, end: next };
      if (buf.length < next + length + 2) return null;
      return { value: buf.toString("utf8", next, next + length), end: next + length + 2 };
    }
    case "*": {
      const count = Number(line);
      if (count < 0) return { value: null, end: next };
      const items: Reply[] = [];
      let at = next;
      for (let i = 0; i < count; i++) {
        const item = parseReply(buf, at);
        if (!item) return null;
        items.push(item.value);
        at = item.end;
      }
      return { value: items, end: at };
    }
    default:
      throw new Error(`unexpected Redis reply type ${JSON.stringify(type)}`);
  }
}

/** Certificate errors say what to do about them: they do not go away by retrying. */
function explainTlsError(error: Error & { code?: string }): Error {
  const code = error.code ?? "";
  if (!/CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)/.test(code)) return error;
  return new Error(
    `the Redis server's TLS certificate is not trusted (${code}: ${error.message}); if it is signed by a private CA, give that CA's PEM file to Sluice as NODE_EXTRA_CA_CERTS`,
  );
}
