import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Redis } from "ioredis";
import { RedisAttemptStore } from "../../server/accounts/redis-attempt-store";
import { SignInLimiter } from "../../server/accounts/sign-in-limiter";
import { TooManyRequestsError } from "../../server/errors";
import type { LogFields, Logger } from "../../server/logger";
import { openRedis, openSubscriber } from "../../server/redis/redis-connection";
import { redisMissingReason, startRedis, startSentinel, type RedisServer } from "../fixtures/redis";
import { waitFor } from "../fixtures/wait-for";

const skip = redisMissingReason() ?? false;

/** A logger that keeps its warnings, for asserting what reached the log. */
function recordingLogger(): Logger & { warnings: string[] } {
  const warnings: string[] = [];
  const keep = (first: string | LogFields, second?: string) => void warnings.push(typeof first === "string" ? first : (second ?? ""));
  return { warnings, debug: () => undefined, info: () => undefined, warn: keep, error: keep };
}

async function timed<T>(work: Promise<T>): Promise<{ ms: number; error: Error | null }> {
  const start = Date.now();
  try {
    await work;
    return { ms: Date.now() - start, error: null };
  } catch (error) {
    return { ms: Date.now() - start, error: error as Error };
  }
}

describe("the process's Redis connection (ioredis, options from the configuration), against a real redis-server", { skip }, () => {
  let redis: RedisServer;
  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    await redis?.stop();
  });

  it("uses the URL's database, names itself uniquely, and answers hashes as objects, pipelined too", async () => {
    const connection = openRedis({ redisUrl: `${redis.url}/3`, redisSentinels: null }, recordingLogger());
    const other = openRedis({ redisUrl: `${redis.url}/3`, redisSentinels: null }, recordingLogger());
    try {
      const info = String(await connection.client("INFO"));
      assert.match(info, /db=3/);
      assert.match(info, /name=sluice-[0-9a-f-]{36} /);
      assert.notEqual(connection.options.connectionName, other.options.connectionName);
      await connection.hset("h", { a: "1", b: 2 });
      assert.deepEqual(await connection.hgetall("h"), { a: "1", b: "2" });
      assert.deepEqual(await connection.pipeline().hgetall("h").llen("nothing").exec(), [
        [null, { a: "1", b: "2" }],
        [null, 0],
      ]);
    } finally {
      connection.disconnect();
      other.disconnect();
    }
  });

  it("the subscriber connects only when first used, and delivers pub/sub messages", async () => {
    const logger = recordingLogger();
    const connection = openRedis({ redisUrl: redis.url, redisSentinels: null }, logger);
    const subscriber = openSubscriber(connection, logger);
    try {
      const names = async () => String(await connection.client("LIST")).match(/name=\S+/g) ?? ([] as string[]);
      assert.ok(!(await names()).some((n) => n.endsWith("-subscriber")), "no subscriber connection before a subscription");
      const got = new Promise<[string, string]>((resolve) => subscriber.once("message", (channel: string, payload: string) => resolve([channel, payload])));
      await subscriber.subscribe("news");
      assert.ok((await names()).includes(`name=${connection.options.connectionName}-subscriber`));
      await connection.publish("news", "hello");
      assert.deepEqual(await got, ["news", "hello"]);
    } finally {
      subscriber.disconnect();
      connection.disconnect();
    }
  });

  it("the shared sign-in limits hold across processes, atomically: of 200 attempts at once on two connections exactly 10 pass", async () => {
    const one = openRedis({ redisUrl: redis.url, redisSentinels: null }, recordingLogger());
    const two = openRedis({ redisUrl: redis.url, redisSentinels: null }, recordingLogger());
    try {
      const a = new SignInLimiter(new RedisAttemptStore(one, "t"));
      const b = new SignInLimiter(new RedisAttemptStore(two, "t"));
      const attempts = await Promise.allSettled(Array.from({ length: 200 }, (_, i) => (i % 2 ? a : b).reserveSignIn("10.0.0.1", "Ada@example.com")));
      assert.equal(attempts.filter((r) => r.status === "fulfilled").length, 10);
      const refused = attempts.find((r) => r.status === "rejected")!.reason;
      assert.ok(refused instanceof TooManyRequestsError);
      assert.ok(refused.retryAfterSeconds > 55 && refused.retryAfterSeconds <= 60, String(refused.retryAfterSeconds));
      // The owner elsewhere is not locked out; a success forgives the pair's failures.
      const owner = await b.reserveSignIn("10.0.0.2", "ada@example.com");
      for (let i = 0; i < 9; i++) await a.reserveSignIn("10.0.0.2", "ada@example.com");
      await b.signInSucceeded(owner);
      for (let i = 0; i < 10; i++) await a.reserveSignIn("10.0.0.2", "ada@example.com");
      await assert.rejects(() => a.reserveSignIn("10.0.0.2", "ada@example.com"), TooManyRequestsError);
      // 29 counted at this account so far (10 + 9 + 10: the success took its own back); 71 more reach the ceiling (100 in 15 minutes), past which each address gets one try.
      for (let n = 0; n < 7; n++) for (let i = 0; i < 10; i++) await a.reserveSignIn(`10.0.1.${n}`, "ada@example.com");
      await a.reserveSignIn("10.0.1.7", "ada@example.com");
      await a.reserveSignIn("10.0.2.1", "ada@example.com");
      await assert.rejects(() => b.reserveSignIn("10.0.2.1", "ada@example.com"), TooManyRequestsError);
      // Sign-up: 20 an hour per address.
      for (let i = 0; i < 20; i++) await (i % 2 ? a : b).reserveSignUp("10.0.0.9");
      await assert.rejects(() => a.reserveSignUp("10.0.0.9"), (e: unknown) => e instanceof TooManyRequestsError && e.retryAfterSeconds > 3590);
    } finally {
      one.disconnect();
      two.disconnect();
    }
  });

  it("Redis gone: a command fails after 5 s instead of hanging, the log says so once, and the connection comes back with Redis", async () => {
    const own = await startRedis();
    const logger = recordingLogger();
    const connection = openRedis({ redisUrl: own.url, redisSentinels: null }, logger);
    let back: RedisServer | null = null;
    try {
      assert.equal(await connection.ping(), "PONG");
      await own.stop();
      const { ms, error } = await timed(connection.get("k"));
      assert.match(String(error?.message), /timed out/);
      assert.ok(ms >= 4_500 && ms < 9_000, `failed after ${ms} ms`);
      const refused = logger.warnings.filter((w) => w.includes("ECONNREFUSED"));
      assert.equal(refused.length, 1, `one line per outage, not one per reconnect attempt: ${JSON.stringify(logger.warnings)}`);

      back = await startRedis({ port: own.port });
      // The back-off is at most 3 s between attempts.
      await waitFor(async () => (await connection.set("k", "v").catch(() => null)) === "OK", "the connection to come back within its 3 s back-off", { timeoutMs: 6_000 });
      assert.equal(await connection.get("k"), "v");
    } finally {
      connection.disconnect();
      await back?.stop();
    }
  });
});

describe("the Redis connection over TLS (rediss://) and through Sentinel", { skip }, () => {
  it("an untrusted certificate is reported with what to do, and commands fail rather than wait forever", async () => {
    const tlsRedis = await startRedis({ tls: true });
    const logger = recordingLogger();
    // This test process does not trust the test CA (the server test gives it NODE_EXTRA_CA_CERTS).
    const untrusting = openRedis({ redisUrl: tlsRedis.url, redisSentinels: null }, logger);
    try {
      const { error } = await timed(untrusting.ping());
      assert.ok(error, "the command failed");
      assert.match(logger.warnings[0] ?? "", /TLS certificate is not trusted \(SELF_SIGNED_CERT_IN_CHAIN/);
      assert.match(logger.warnings[0], /NODE_EXTRA_CA_CERTS/);
    } finally {
      untrusting.disconnect();
      await tlsRedis.stop();
    }
  });

  it("REDIS_SENTINELS: the Sentinel names the master, and commands reach it in the URL's database", async () => {
    const master = await startRedis();
    const sentinel = await startSentinel(master, "sluice-master");
    const [host, port] = sentinel.address.split(":");
    const viaSentinel = openRedis({ redisUrl: "redis://sluice-master/2", redisSentinels: [{ host, port: Number(port) }] }, recordingLogger());
    const direct = new Redis(`${master.url}/2`);
    try {
      assert.equal(await viaSentinel.set("through-sentinel", "yes"), "OK");
      assert.equal(await direct.get("through-sentinel"), "yes");
    } finally {
      viaSentinel.disconnect();
      direct.disconnect();
      await sentinel.stop();
      await master.stop();
    }
  });
});
