import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { describe, it } from "node:test";
import express from "express";
import { ConfigError, loadConfig } from "../../server/config";
import { reconnectDelay, redisOptions } from "../../server/redis/redis-connection";

describe("team server mode settings", () => {
  it("REDIS_URL is off by default; redis:// and rediss:// are taken", () => {
    assert.equal(loadConfig({}).redisUrl, null);
    assert.equal(loadConfig({ REDIS_URL: "redis://127.0.0.1:6379/2" }).redisUrl, "redis://127.0.0.1:6379/2");
    assert.equal(loadConfig({ REDIS_URL: " rediss://u:p@cache.example:6380 " }).redisUrl, "rediss://u:p@cache.example:6380");
  });

  it("INGEST_CONCURRENCY: 1 by default, a whole number from 1 to 64, above 1 only with REDIS_URL (the desktop runs one job at a time)", () => {
    assert.equal(loadConfig({}).ingestConcurrency, 1);
    assert.equal(loadConfig({ INGEST_CONCURRENCY: "1" }).ingestConcurrency, 1);
    assert.equal(loadConfig({ REDIS_URL: "redis://127.0.0.1:6379", INGEST_CONCURRENCY: " 3 " }).ingestConcurrency, 3);
    for (const bad of ["0", "-1", "1.5", "65", "two"]) {
      assert.throws(() => loadConfig({ REDIS_URL: "redis://127.0.0.1:6379", INGEST_CONCURRENCY: bad }), new RegExp(`INGEST_CONCURRENCY must be an integer from 1 to 64, got "${bad}"`));
    }
    assert.throws(() => loadConfig({ INGEST_CONCURRENCY: "2" }), /INGEST_CONCURRENCY above 1 needs REDIS_URL \(a team server\): the desktop runs one ingestion job at a time, got "2"/);
  });

  it("anything else in REDIS_URL is a configuration error", () => {
    for (const bad of ["http://127.0.0.1:6379", "127.0.0.1:6379", "redis//x"]) {
      assert.throws(() => loadConfig({ REDIS_URL: bad }), ConfigError, bad);
    }
  });

  it("REDIS_URL's path is a database number, and a bad one is an error that does not repeat the URL", () => {
    assert.throws(
      () => loadConfig({ REDIS_URL: "redis://:secret@cache.example/queue" }),
      (error: unknown) => error instanceof ConfigError && /database number/.test(error.message) && !error.message.includes("secret"),
    );
  });

  it("REDIS_SENTINELS takes host:port pairs; REDIS_URL's host is then the master group name", () => {
    assert.equal(loadConfig({ REDIS_URL: "redis://127.0.0.1:6379" }).redisSentinels, null);
    assert.deepEqual(loadConfig({ REDIS_URL: "redis://mymaster/1", REDIS_SENTINELS: "10.0.0.1:26379, sentinel-b.example:26380,[::1]:26381" }).redisSentinels, [
      { host: "10.0.0.1", port: 26379 },
      { host: "sentinel-b.example", port: 26380 },
      { host: "::1", port: 26381 },
    ]);
    assert.throws(() => loadConfig({ REDIS_SENTINELS: "10.0.0.1:26379" }), /needs REDIS_URL/);
    assert.throws(() => loadConfig({ REDIS_URL: "redis://mymaster:6379", REDIS_SENTINELS: "10.0.0.1:26379" }), /takes no port/);
    for (const bad of ["10.0.0.1", "10.0.0.1:0", "10.0.0.1:26379,", "a:b"]) {
      assert.throws(() => loadConfig({ REDIS_URL: "redis://mymaster", REDIS_SENTINELS: bad }), /host:port pairs/, bad);
    }
  });

  it("one place turns the configuration into ioredis options: address, credentials, database, timeouts", () => {
    assert.deepEqual(redisOptions({ redisUrl: "redis://ops:p%40ss@cache.example:6380/2", redisSentinels: null }), {
      host: "cache.example",
      port: 6380,
      username: "ops",
      password: "p@ss",
      db: 2,
      maxRetriesPerRequest: null,
      commandTimeout: 5000,
      connectTimeout: 5000,
      retryStrategy: reconnectDelay,
    });
    const plain = redisOptions({ redisUrl: "redis://[::1]", redisSentinels: null });
    assert.equal(plain.host, "::1");
    assert.equal(plain.port, 6379);
    assert.equal(plain.db, 0);
    assert.equal("password" in plain || "tls" in plain, false);
  });

  it("rediss:// turns TLS on without a servername (Node sends SNI for host names only); Sentinel mode names the master", () => {
    assert.deepEqual(redisOptions({ redisUrl: "rediss://127.0.0.1:6390", redisSentinels: null }).tls, {});
    const sentinel = redisOptions({ redisUrl: "rediss://:pw@mymaster/1", redisSentinels: [{ host: "10.0.0.1", port: 26379 }] });
    assert.equal(sentinel.name, "mymaster");
    assert.deepEqual(sentinel.sentinels, [{ host: "10.0.0.1", port: 26379 }]);
    assert.equal(sentinel.enableTLSForSentinelMode, true);
    assert.equal(sentinel.password, "pw");
    assert.equal(sentinel.db, 1);
    assert.equal("host" in sentinel, false);
  });

  it("reconnects back off from 200 ms, doubling, to at most 3 s", () => {
    assert.deepEqual([1, 2, 3, 4, 5, 6, 50].map(reconnectDelay), [200, 400, 800, 1600, 3000, 3000, 3000]);
  });

  it("SLUICE_WORKER, REDIS_PREFIX and JWT_SECRET are validated", () => {
    assert.equal(loadConfig({}).runWorker, true);
    assert.equal(loadConfig({ SLUICE_WORKER: "0" }).runWorker, false);
    assert.throws(() => loadConfig({ SLUICE_WORKER: "no" }), ConfigError);
    assert.equal(loadConfig({}).redisPrefix, "sluice");
    assert.throws(() => loadConfig({ REDIS_PREFIX: "a b" }), ConfigError);
    assert.equal(loadConfig({}).jwtSecret, null);
    assert.throws(() => loadConfig({ JWT_SECRET: "short" }), /at least 32/);
    assert.equal(loadConfig({ JWT_SECRET: "x".repeat(32) }).jwtSecret, "x".repeat(32));
  });

  it("SECRETS_KEY takes 32 bytes as hex or base64, and never repeats a bad value", () => {
    assert.equal(loadConfig({}).secretsKey, null);
    const key = Buffer.from(Array.from({ length: 32 }, (_, i) => i));
    assert.deepEqual(loadConfig({ SECRETS_KEY: key.toString("hex") }).secretsKey, key);
    assert.deepEqual(loadConfig({ SECRETS_KEY: key.toString("base64") }).secretsKey, key);
    assert.deepEqual(loadConfig({ SECRETS_KEY: key.toString("base64").replace(/=$/, "") }).secretsKey, key);
    for (const bad of ["my-team-password-123", key.toString("hex").slice(2), Buffer.alloc(16).toString("base64"), Buffer.alloc(48, 0xff).toString("base64")]) {
      assert.throws(
        () => loadConfig({ SECRETS_KEY: bad }),
        (error: unknown) => error instanceof ConfigError && /SECRETS_KEY must be 32 random bytes/.test(error.message) && !error.message.includes(bad),
      );
    }
  });

  it("TRUST_PROXY is off by default; takes a hop count or addresses, CIDR ranges and Express's names; refuses anything else by name", () => {
    assert.equal(loadConfig({}).trustProxy, false);
    assert.equal(loadConfig({ TRUST_PROXY: "0" }).trustProxy, false);
    assert.equal(loadConfig({ TRUST_PROXY: "1" }).trustProxy, 1);
    assert.deepEqual(loadConfig({ TRUST_PROXY: "10.0.0.0/8, 127.0.0.1" }).trustProxy, ["10.0.0.0/8", "127.0.0.1"]);
    assert.deepEqual(loadConfig({ TRUST_PROXY: "loopback,fd00::/8" }).trustProxy, ["loopback", "fd00::/8"]);
    for (const [bad, named] of [["nginx", /invalid IP address: nginx/], ["10.0.0.0/33", /invalid range on address: 10.0.0.0\/33/], ["true", /true/], ["1,", /invalid IP address/]] as const) {
      assert.throws(
        () => loadConfig({ TRUST_PROXY: bad }),
        (error: unknown) => error instanceof ConfigError && /^TRUST_PROXY must be a number of proxy hops \(e\.g\. 1\) or a comma-separated list/.test(error.message) && named.test(error.message),
        bad,
      );
    }
  });

  it("TRUST_PROXY's value is Express's own: the client address a request carries through the trusted proxies", async () => {
    const addressSeen = async (trustProxy: string | undefined, forwardedFor: string) => {
      const app = express();
      app.set("trust proxy", loadConfig({ TRUST_PROXY: trustProxy }).trustProxy);
      app.get("/", (req, res) => {
        res.send(req.ip);
      });
      const server = http.createServer(app).listen(0, "127.0.0.1");
      await new Promise((resolve) => server.once("listening", resolve));
      try {
        const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, { headers: { "x-forwarded-for": forwardedFor } });
        return await res.text();
      } finally {
        server.close();
      }
    };
    assert.equal(await addressSeen(undefined, "203.0.113.9"), "127.0.0.1", "off: the socket's address");
    assert.equal(await addressSeen("1", "203.0.113.9, 198.51.100.7"), "198.51.100.7", "one hop: the address the proxy saw");
    assert.equal(await addressSeen("loopback", "203.0.113.9, 198.51.100.7"), "198.51.100.7", "only the loopback proxy is trusted");
    assert.equal(await addressSeen("127.0.0.1,198.51.100.0/24", "203.0.113.9, 198.51.100.7"), "203.0.113.9", "both proxies trusted");
  });

  it("SIGNUP_LIMIT_PER_HOUR: 20 by default, 0 turns it off", () => {
    assert.equal(loadConfig({}).signUpsPerHour, 20);
    assert.equal(loadConfig({ SIGNUP_LIMIT_PER_HOUR: "200" }).signUpsPerHour, 200);
    assert.equal(loadConfig({ SIGNUP_LIMIT_PER_HOUR: "0" }).signUpsPerHour, null);
    assert.throws(() => loadConfig({ SIGNUP_LIMIT_PER_HOUR: "-1" }), /SIGNUP_LIMIT_PER_HOUR must be an integer from 0 \(no limit\) to 1000000, got "-1"/);
  });
});
