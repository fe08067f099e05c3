import crypto from "node:crypto";
import type { DataSource } from "typeorm";
import { ModelRecord } from "../data/entities/model.entity";
import type { Logger } from "../logger";
import type { Redis } from "ioredis";
import { openSubscriber } from "../redis/redis-connection";
import type { PullEvent, RunningPull } from "./model-pulls";

/** The pull lock lives this long unless its process renews it (every third of it). */
const LOCK_MS = 15_000;
/** How often a follower checks that the process running the pull is still there. */
const WATCH_MS = 1_000;
/** Events and the final event stay readable for late joiners this long. */
const KEEP_MS = 10 * 60_000;

const RENEW = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end";
const RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

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
  private readonly handlers = new Map<string, (wire: Wire) => void>();
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
        this.handlers.get(channel)?.(JSON.parse(payload) as Wire);
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

  /** Runs `lead` as the only upstream pull of the model, or relays the one another process runs. */
  async run(pull: RunningPull, lead: () => Promise<void>): Promise<void> {
    const lockKey = `${this.prefix}:model-pull:${pull.modelName}`;
    while (!pull.finished && !pull.controller.signal.aborted) {
      const id = crypto.randomUUID();
      if ((await this.redis.set(lockKey, id, "PX", LOCK_MS, "NX")) === "OK") return this.leadPull(pull, lockKey, id, lead);
      const owner = await this.redis.get(lockKey);
      if (owner && this.endedHere.has(owner)) await new Promise((resolve) => setTimeout(resolve, 20));
      else if (owner) await this.follow(pull, lockKey, owner);
    }
  }

  /** Closes the subscriber; the shared connection belongs to the caller. */
  async close(): Promise<void> {
    await this.subscriber.quit().catch(() => undefined);
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
      const final = event.status === "completed" || event.status === "error";
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
          // Ended: the next request for this model, here or elsewhere, starts a fresh pull.
          if (final) await this.redis.eval(RELEASE, 1, lockKey, id);
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
    this.handlers.set(keys.channel, deliver);
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
    try {
      await this.subscriber.subscribe(keys.channel);
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
      this.handlers.delete(keys.channel);
      await this.subscriber.unsubscribe(keys.channel).catch(() => undefined);
    }
  }
}
