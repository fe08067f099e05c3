import type { MessagePort, TransferListItem, Worker } from "node:worker_threads";
import { answerCall, PendingCalls, type CallReply } from "./pending-calls";
import type { ErrorKinds, WireError } from "./wire-error";

/**
 * Typed calls between threads: one request shape ({ id, method, args }) and one reply shape
 * (CallReply) for every worker thread. A protocol is an interface of the methods one side
 * answers; TypeScript checks each call's method name, arguments and result against it, on both
 * sides. Hand-written (~100 lines) rather than comlink or birpc: those wrap a thread in a Proxy,
 * give each call a string id and listener of its own, and carry errors without their codes;
 * here errors keep the kinds callers test (wire-error.ts), MessagePorts and buffers go in
 * transfer lists, and pools keep their own scheduling (index-reader-pool.ts, parser-pool.ts).
 */

/** A thread's methods as another thread calls them: name -> (args) => result or its promise. */
export type Protocol<P> = { [M in keyof P]: (...args: never[]) => unknown };
export type Method<P> = keyof P & string;
export type Args<P, M extends Method<P>> = P[M] extends (...args: infer A) => unknown ? A : never;
export type Result<P, M extends Method<P>> = P[M] extends (...args: never[]) => infer R ? Awaited<R> : never;

/** One call as it crosses. Id 0 is a note: it is run and gets no reply. */
export type CallRequest<P> = { [M in Method<P>]: { id: number; method: M; args: Args<P, M> } }[Method<P>];

/** The reply to one call of `M`, its result typed. */
export type ReplyOf<P, M extends Method<P>> = { id: number; ok: true; result: Result<P, M> } | { id: number; ok: false; error: WireError };

/** What answers a protocol's calls: each method, returning its result or a promise of it. */
export type Handlers<P> = { [M in Method<P>]: (...args: Args<P, M>) => Result<P, M> | Promise<Result<P, M>> };

/** Posts one message to the other thread (a Worker, a worker's parentPort, a MessagePort). */
export type Post = (message: unknown, transfer?: readonly TransferListItem[]) => void;

/** The calling side of one channel: calls P's methods on the other thread. Replies come back through settle(). */
export class Caller<P extends Protocol<P>, Meta = undefined> {
  private readonly pending: PendingCalls<Meta>;

  constructor(
    private readonly post: Post,
    kinds: ErrorKinds = {},
  ) {
    this.pending = new PendingCalls<Meta>(kinds);
  }

  call<M extends Method<P>>(method: M, ...args: Args<P, M>): Promise<Result<P, M>> {
    return this.callWith(undefined as Meta, undefined, method, args);
  }

  /**
   * A call with what this side needs to know at its reply (PendingCalls' meta) and what moves
   * rather than being copied. `args` goes as it is: a caller's own rest array is not copied again.
   */
  callWith<M extends Method<P>>(meta: Meta, transfer: readonly TransferListItem[] | undefined, method: M, args: Args<P, M>): Promise<Result<P, M>> {
    return this.pending.call<Result<P, M>>(meta, (id) => this.post({ id, method, args } as CallRequest<P>, transfer));
  }

  /** A call nobody waits for: no reply comes. */
  note<M extends Method<P>>(method: M, ...args: Args<P, M>): void {
    this.post({ id: 0, method, args } as CallRequest<P>);
  }

  noteWith<M extends Method<P>>(transfer: readonly TransferListItem[], method: M, args: Args<P, M>): void {
    this.post({ id: 0, method, args } as CallRequest<P>, transfer);
  }

  /** A reply from the other thread; see PendingCalls.settle. */
  settle(reply: CallReply): { meta: Meta; error: Error | null } | undefined {
    return this.pending.settle(reply);
  }

  /** The other thread or the channel is gone: what still waits fails (all, or those `which` picks). */
  failAll(error: Error, which?: (meta: Meta) => boolean): void {
    this.pending.failAll(error, which);
  }
}

/** Whether a message is a reply (to this side's own calls) rather than a request. */
export function isReply<P>(message: CallReply | CallRequest<P>): message is CallReply {
  return "ok" in message;
}

/**
 * Answers P's calls arriving on `port` with `handlers` (an object whose methods run with it as
 * `this`). A channel used both ways passes `onReply`: the replies to this side's own calls.
 */
export function serve<P extends Protocol<P>>(port: MessagePort | Worker, handlers: Handlers<P>, onReply?: (reply: CallReply) => void): void {
  const post = (reply: CallReply) => port.postMessage(reply);
  port.on("message", (message: CallRequest<P> | CallReply) => {
    if (isReply(message)) return onReply?.(message);
    const handler = handlers[message.method] as (...args: unknown[]) => unknown;
    if (message.id === 0) return void handler.apply(handlers, message.args);
    void answerCall(post, message.id, () => handler.apply(handlers, message.args));
  });
}

/** Some of an object's methods, bound to it: the calls a thread answers from it, and no others. */
export function methodsOf<T, K extends keyof T>(target: T, names: readonly K[]): Pick<T, K> {
  const picked = {} as Pick<T, K>;
  for (const name of names) picked[name] = (target[name] as (...args: unknown[]) => unknown).bind(target) as T[K];
  return picked;
}
