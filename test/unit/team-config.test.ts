import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ConfigError, loadConfig } from "../../server/config";

describe("team server mode settings", () => {
  it("REDIS_URL is off by default; redis:// and rediss:// are taken", () => {
    assert.equal(loadConfig({}).redisUrl, null);
    assert.equal(loadConfig({ REDIS_URL: "redis://127.0.0.1:6379/2" }).redisUrl, "redis://127.0.0.1:6379/2");
    assert.equal(loadConfig({ REDIS_URL: " rediss://u:p@cache.example:6380 " }).redisUrl, "rediss://u:p@cache.example:6380");
  });

  it("anything else in REDIS_URL is a configuration error", () => {
    for (const bad of ["http://127.0.0.1:6379", "127.0.0.1:6379", "redis//x"]) {
      assert.throws(() => loadConfig({ REDIS_URL: bad }), ConfigError, bad);
    }
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
});
