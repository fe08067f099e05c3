import crypto from "node:crypto";
import type { DataSource } from "typeorm";
import { ModelRecord } from "../data/entities/model.entity";
import type { Logger } from "../logger";
import type { Redis } from "ioredis";
import { openSubscriber } from "../redis/redis-connection";
import { isFinalEvent, type PullEvent, type RunningPull } from "./model-pulls";

/** The pull lock lives this long unless its process renews it (every third of it). */
const LOCK_MS = 15_000;
/** How often a follower checks that the process running the pull is still there. */
const WATCH_MS = 1_000;
/** Events and the final event stay readable for late joiners this long. */
const KEEP_MS = 10 * 60_000;

const RENEW = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end";
const RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

/** A user withdrew from a model's pull (published to every process; `stop` when nobody is left waiting). */
export interface CancelNotice {
  user_id: string;
  stop: boolean;
}

interface Wire {
  seq: number;
  key: string;
  /** A completed event names its model instead of carrying the record. */
  event: PullEvent | { status: "completed"; model_name: string };
  final?: boolean;
}

/**
 * One upstream pull per model across every API process of a team (REDIS_URL). The process
 * that takes the model's lock (SET NX PX, renewed) runs the pull and relays its events over
 * pub/sub, keeping the latest per layer in a hash for callers who join later; the others
 * attach their callers to that stream. If the running process vanishes, a follower takes over.
 */
export class SharedPulls {
  /** channel -> the handlers listening on it here; the channel is subscribed while the set is not empty. */
  private readonly handlers = new Map<string, Set<(message: unknown) => void>>();
  /** Pulls led here that have ended but whose lock is not released yet: never joined, only waited out. */
  private readonly endedHere = new Set<string>();

  constructor(
    /** The process's shared connection (openRedis). */
    private readonly redis: Redis,
    /** Its own connection for pub/sub. */
    private readonly subscriber: Redis,
    private readonly prefix: string,
    private readonly loadCompleted: (modelName: string) => Promise<PullEvent>,
    private readonly logger?: Logger,
  ) {
    this.subscriber.on("message", (channel: string, payload: string) => {
      try {
        const message: unknown = JSON.parse(payload);
        for (const handler of [...(this.handlers.get(channel) ?? [])]) handler(message);
      } catch (error) {
        this.logger?.warn(`model pull relay: ${(error as Error).message}`);
      }
    });
  }

  static open(redis: Redis, prefix: string, db: DataSource, logger: Logger): SharedPulls {
    const loadCompleted = async (modelName: string): Promise<PullEvent> => ({
      status: "completed",
      model: await db.manager.findOneByOrFail(ModelRecord, { modelName }),
    });
    return new SharedPulls(redis, openSubscriber(redis, logger), prefix, loadCompleted, logger);
  }

  /**
   * Runs `lead` as the only upstream pull of the model, or relays the one another process runs.
   * Cancellations of the model's pull, made on any process, reach `onCancel` while it runs.
   */
  async run(pull: RunningPull, lead: () => Promise<void>, onCancel: (notice: CancelNotice) => void): Promise<void> {
    const lockKey = `${this.prefix}:model-pull:${pull.modelName}`;
    const stopListening = await this.listen(this.cancelChannel(pull.modelName), (message) => onCancel(message as CancelNotice));
    try {
      while (!pull.finished && !pull.controller.signal.aborted) {
        const id = crypto.randomUUID();
        if ((await this.redis.set(lockKey, id, "PX", LOCK_MS, "NX")) === "OK") return await this.leadPull(pull, lockKey, id, lead);
        const owner = await this.redis.get(lockKey);
        if (owner && this.endedHere.has(owner)) await new Promise((resolve) => setTimeout(resolve, 20));
        else if (owner) await this.follow(pull, lockKey, owner);
      }
    } finally {
      await stopListening();
    }
  }

  /** Records that a user asked for the model's pull (on any process), so a cancel elsewhere knows who still waits. */
  async addRequester(modelName: string, userId: string): Promise<void> {
    const key = this.requestersKey(modelName);
    await this.redis.multi().sadd(key, userId).pexpire(key, KEEP_MS).exec();
  }

  /**
   * Withdraws the user from the model's pull and tells every process; null when the user had no
   * pull of it under way. `stopped` is true when nobody else waits, so the download stops.
   */
  async cancel(modelName: string, userId: string): Promise<{ stopped: boolean } | null> {
    const key = this.requestersKey(modelName);
    const [removed, left] = ((await this.redis.multi().srem(key, userId).scard(key).exec()) ?? []).map(([, value]) => Number(value));
    if (!removed) return null;
    const notice: CancelNotice = { user_id: userId, stop: left === 0 };
    await this.redis.publish(this.cancelChannel(modelName), JSON.stringify(notice));
    return { stopped: notice.stop };
  }

  /** Closes the subscriber; the shared connection belongs to the caller. */
  async close(): Promise<void> {
    await this.subscriber.quit().catch(() => undefined);
  }

  private requestersKey(modelName: string): string {
    return `${this.prefix}:model-pull-requesters:${modelName}`;
  }

  private cancelChannel(modelName: string): string {
    return `${this.prefix}:model-pull-cancel:${modelName}`;
  }

  /** Subscribes the handler to the channel (the connection subscribes once per channel); returns how to stop. */
  private async listen(channel: string, handler: (message: unknown) => void): Promise<() => Promise<void>> {
    let set = this.handlers.get(channel);
    if (!set) {
      set = new Set();
      this.handlers.set(channel, set);
    }
    set.add(handler);
    if (set.size === 1) await this.subscriber.subscribe(channel);
    return async () => {
      set.delete(handler);
      if (set.size > 0 || this.handlers.get(channel) !== set) return;
      this.handlers.delete(channel);
      await this.subscriber.unsubscribe(channel).catch(() => undefined);
    };
  }

  private keys(id: string) {
    const channel = `${this.prefix}:model-pull-events:${id}`;
    return { channel, events: `${channel}:latest`, final: `${channel}:final` };
  }

  private async leadPull(pull: RunningPull, lockKey: string, id: string, lead: () => Promise<void>): Promise<void> {
    const keys = this.keys(id);
    const renew = setInterval(() => void this.redis.eval(RENEW, 1, lockKey, id, LOCK_MS).catch(() => undefined), LOCK_MS / 3);
    let seq = 0;
    let relay: Promise<unknown> = Promise.resolve();
    const unsubscribe = pull.subscribe((event) => {
      const final = isFinalEvent(event);
      if (final) this.endedHere.add(id);
      // The catalog record goes over the wire as its name; followers read it from the shared database.
      const wire: Wire = {
        seq: seq++,
        key: typeof event.digest === "string" ? `layer ${event.digest}` : event.status,
        event: event.status === "completed" ? { status: "completed", model_name: pull.modelName } : event,
        final,
      };
      const payload = JSON.stringify(wire);
      relay = relay
        .then(async () => {
          if (final) await this.redis.set(keys.final, payload, "PX", KEEP_MS);
          else {
            await this.redis.hset(keys.events, { [wire.key]: payload });
            await this.redis.pexpire(keys.events, KEEP_MS);
          }
          await this.redis.publish(keys.channel, payload);
          // Ended: the next request for this model, here or elsewhere, starts a fresh pull, with its own requesters.
          if (final) {
            await this.redis.del(this.requestersKey(pull.modelName));
            await this.redis.eval(RELEASE, 1, lockKey, id);
          }
        })
        .catch((error: Error) => this.logger?.warn(`model pull relay: ${error.message}`));
    });
    try {
      await lead();
    } finally {
      unsubscribe();
      await relay;
      clearInterval(renew);
      await this.redis.eval(RELEASE, 1, lockKey, id).catch(() => undefined);
      this.endedHere.delete(id);
    }
  }

  /** Relays another process's pull into this one until it ends (or its process is gone). */
  private async follow(pull: RunningPull, lockKey: string, owner: string): Promise<void> {
    const keys = this.keys(owner);
    let finishing: Promise<void> | null = null;
    let resolveDone!: () => void;
    const done = new Promise<void>((resolve) => (resolveDone = resolve));
    const finish = (wire: Wire) => {
      finishing ??= (async () => {
        pull.finish(wire.event.status === "completed" ? await this.loadCompleted(pull.modelName) : wire.event);
        resolveDone();
      })().catch((error: Error) => {
        pull.finish({ status: "error", error: `The model was downloaded but could not be read back (${error.message})` });
        resolveDone();
      });
    };
    const deliver = (wire: Wire) => (wire.final ? finish(wire) : pull.emit(wire.event));
    const onAbort = () => resolveDone();
    pull.controller.signal.addEventListener("abort", onAbort);
    const watch = setInterval(() => {
      void (async () => {
        if ((await this.redis.get(lockKey)) === owner) return;
        const final = await this.redis.get(keys.final);
        if (final) finish(JSON.parse(final) as Wire);
        else resolveDone(); // its process is gone: run() takes over
      })().catch(() => undefined);
    }, WATCH_MS);
    let stopListening: () => Promise<void> = async () => {};
    try {
      stopListening = await this.listen(keys.channel, (message) => deliver(message as Wire));
      // What happened before we listened: the latest per layer, in order, then the end if it came.
      const latest = Object.values(await this.redis.hgetall(keys.events))
        .map((raw) => JSON.parse(raw) as Wire)
        .sort((a, b) => a.seq - b.seq);
      for (const wire of latest) pull.emit(wire.event);
      // A pull that had already ended when we came is not joined: wait for its lock to go, then start afresh.
      if (await this.redis.get(keys.final)) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        return;
      }
      await done;
      await finishing;
    } finally {
      clearInterval(watch);
      pull.controller.signal.removeEventListener("abort", onAbort);
      await stopListening();
    }
  }
}
