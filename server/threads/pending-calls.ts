import { fromWire, toWire, type ErrorKinds, type WireError } from "./wire-error";

/** A thread's answer to one request, matched to it by id. */
export type CallReply = { id: number; ok: true; result: unknown } | { id: number; ok: false; error: WireError };

interface Waiting<Meta> {
  resolve(value: unknown): void;
  reject(error: Error): void;
  meta: Meta;
}

/**
 * The calling side of a request/reply channel to another thread: each request gets an id, the
 * reply with that id settles its promise, and when the thread or channel ends whatever still
 * waits fails at once. `Meta` is what the caller needs to know about a call when its reply comes
 * (e.g. which collection it was for, which thread it went to).
 */
export class PendingCalls<Meta = undefined> {
  private readonly waiting = new Map<number, Waiting<Meta>>();
  private nextId = 1;

  constructor(private readonly kinds: ErrorKinds = {}) {}

  /** A new call: `send` posts the request under its id; the promise settles with that id's reply. */
  call<T>(meta: Meta, send: (id: number) => void): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as (value: unknown) => void, reject, meta });
      send(id);
    });
  }

  /** Settles the reply's call; answers its meta and its error (null when it succeeded), or undefined when no call has that id. */
  settle(reply: CallReply): { meta: Meta; error: Error | null } | undefined {
    const call = this.waiting.get(reply.id);
    if (!call) return undefined;
    this.waiting.delete(reply.id);
    if (reply.ok) {
      call.resolve(reply.result);
      return { meta: call.meta, error: null };
    }
    const error = fromWire(reply.error, this.kinds);
    call.reject(error);
    return { meta: call.meta, error };
  }

  /** Fails the calls still waiting (all, or those `which` picks): their thread or channel is gone. */
  failAll(error: Error, which: (meta: Meta) => boolean = () => true): void {
    for (const [id, call] of this.waiting) {
      if (!which(call.meta)) continue;
      this.waiting.delete(id);
      call.reject(error);
    }
  }
}

/** The answering side: runs one request's work (its result, or a promise of it) and posts its reply, the error as it can cross. */
export async function answerCall(post: (reply: CallReply) => void, id: number, work: () => unknown): Promise<void> {
  try {
    post({ id, ok: true, result: await work() });
  } catch (error) {
    post({ id, ok: false, error: toWire(error) });
  }
}
