import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { RedisSignInLimiter } from "../../server/accounts/redis-sign-in-limiter";
import { TooManyRequestsError } from "../../server/errors";
import { RedisClient } from "../../server/redis/redis-client";
import { redisMissingReason, startRedis, type RedisServer } from "../fixtures/redis";

const skip = redisMissingReason() ?? false;

describe("the Redis client and the shared sign-in limiter, against a real redis-server", { skip }, () => {
  let redis: RedisServer;
  let client: RedisClient;
  before(async () => {
    redis = await startRedis();
    client = new RedisClient({ url: `${redis.url}/3`, connectionName: "sluice-test" });
    await client.connect();
  });
  after(async () => {
    await client?.quit();
    await redis?.stop();
  });

  it("runs commands, hashes, transactions, pipelines and scripts, in the database of the URL", async () => {
    assert.equal(await client.set("k", "v", { PX: 10_000, NX: true }), "OK");
    assert.equal(await client.set("k", "w", { NX: true }), null);
    assert.equal(await client.get("k"), "v");
    await client.hset("h", { a: "1", b: 2 });
    assert.deepEqual(await client.hgetall("h"), { a: "1", b: "2" });
    assert.deepEqual(await client.multi().del("k").hgetall("h").exec(), [
      [null, 1],
      [null, { a: "1", b: "2" }],
    ]);
    client.defineCommand("double", { numberOfKeys: 1, lua: "return tonumber(redis.call('hget', KEYS[1], ARGV[1])) * 2" });
    assert.equal(await client.runCommand("double", ["h", "b"]), 4);
    const piped = await client.pipeline().runCommand("double", ["h", "a"]).llen("nothing").exec();
    assert.deepEqual(piped, [[null, 2], [null, 0]]);
    assert.match(await client.clientList(), /name=sluice-test/);
    assert.match(await client.clientInfo(), /db=3/);
  });

  it("delivers pub/sub messages on a subscribed connection", async () => {
    const sub = client.duplicate({ connectionName: "sluice-sub" });
    try {
      const got = new Promise<[string, string]>((resolve) => sub.once("message", (channel: string, payload: string) => resolve([channel, payload])));
      await sub.subscribe("news");
      await client.call("PUBLISH", "news", "hello");
      assert.deepEqual(await got, ["news", "hello"]);
    } finally {
      await sub.quit();
    }
  });

  it("the shared limiter blocks after 10 failures for every process, and a success clears the account", async () => {
    const a = new RedisSignInLimiter(client, "t");
    const other = client.duplicate();
    const b = new RedisSignInLimiter(other, "t");
    for (let i = 0; i < 10; i++) await a.recordFailure(`10.0.0.${i}`, "Ada@example.com");
    await assert.rejects(() => b.assertAllowed("10.9.9.9", "ada@example.com"), TooManyRequestsError);
    await b.assertAllowed("10.9.9.9", "bob@example.com");
    await a.recordSuccess("ada@example.com");
    await b.assertAllowed("10.9.9.9", "ada@example.com");
    await other.quit();
  });
});

describe("the Redis client over TLS (rediss://)", { skip }, () => {
  let tlsRedis: RedisServer;
  before(async () => {
    tlsRedis = await startRedis({ tls: true });
  });
  after(async () => {
    await tlsRedis?.stop();
  });

  it("an untrusted certificate is reported with what to do, and commands fail rather than wait forever", async () => {
    // This test process does not trust the test CA (the server test gives it NODE_EXTRA_CA_CERTS).
    const untrusting = new RedisClient({ url: tlsRedis.url, offlineTimeoutMs: 1500 });
    const errors: Error[] = [];
    untrusting.on("error", (error: Error) => errors.push(error));
    try {
      await assert.rejects(untrusting.call("PING"));
      assert.ok(errors.length > 0);
      assert.match(errors[0].message, /TLS certificate is not trusted \(SELF_SIGNED_CERT_IN_CHAIN/);
      assert.match(errors[0].message, /NODE_EXTRA_CA_CERTS/);
    } finally {
      untrusting.disconnect();
    }
  });
});
