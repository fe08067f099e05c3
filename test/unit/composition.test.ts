import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { composeApi, composeWorker, modeOf } from "../../server/composition/compose";
import { ConfigError, loadConfig } from "../../server/config";
import { LOCK_FILE_NAME } from "../../server/instance-lock";
import { createLogger } from "../../server/logger";

const PG = "postgres://u:p@db.example:5432/sluice";
const REDIS = "redis://127.0.0.1:6379";

describe("the composition root", () => {
  it("decides the mode from DATABASE_URL and REDIS_URL, each on its own", () => {
    assert.deepEqual(modeOf(loadConfig({})), { database: "sqlite", queue: "in-process" });
    assert.deepEqual(modeOf(loadConfig({ DATABASE_URL: PG })), { database: "postgres", queue: "in-process" });
    assert.deepEqual(modeOf(loadConfig({ REDIS_URL: REDIS })), { database: "sqlite", queue: "redis" });
    assert.deepEqual(modeOf(loadConfig({ DATABASE_URL: PG, REDIS_URL: REDIS })), { database: "postgres", queue: "redis" });
  });

  it("a desktop API process holds DATA_DIR's instance lock from start-up to close", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "sluice-compose-"));
    const composition = await composeApi(loadConfig({ DATA_DIR: dataDir, SLUICE_SECRETS: "file" }), createLogger("silent"));
    try {
      assert.deepEqual(composition.mode, { database: "sqlite", queue: "in-process" });
      assert.equal(composition.redis, null);
      assert.ok(fs.existsSync(path.join(dataDir, LOCK_FILE_NAME)));
      await composition.start();
    } finally {
      await composition.close();
    }
    assert.equal(fs.existsSync(path.join(dataDir, LOCK_FILE_NAME)), false);
  });

  it("a worker without REDIS_URL is a configuration error, before anything is opened", async () => {
    const dataDir = path.join(os.tmpdir(), `sluice-compose-none-${process.pid}`);
    await assert.rejects(composeWorker(loadConfig({ DATA_DIR: dataDir }), createLogger("silent")), (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.match(error.message, /^REDIS_URL must be set/);
      return true;
    });
    assert.equal(fs.existsSync(dataDir), false);
  });
});
