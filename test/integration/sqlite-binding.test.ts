import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { after, describe, it } from "node:test";
import { ELECTRON_SQLITE_BINDING_ENV, SqliteBindingError, sqliteNativeBinding } from "../../server/data/sqlite-binding";
import { tempDir } from "../fixtures/sluice-server";

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

/** A folder laid out like electron-native/: a better_sqlite3.node and the build-info.json the rebuild script writes. */
function electronNative(buildInfo: object | null, binding: "node-build" | "none" = "node-build"): string {
  const dir = tempDir("sluice-electron-native-");
  dirs.push(dir);
  if (binding === "node-build") fs.copyFileSync(require.resolve("better-sqlite3/build/Release/better_sqlite3.node"), path.join(dir, "better_sqlite3.node"));
  if (buildInfo) fs.writeFileSync(path.join(dir, "build-info.json"), JSON.stringify(buildInfo));
  return path.join(dir, "better_sqlite3.node");
}

const ELECTRON = { electron: "41.7.1", modules: "145" };

describe("which better-sqlite3 build a process loads", () => {
  it("is node_modules' own build under Node, whatever the environment says", () => {
    assert.equal(sqliteNativeBinding({ env: {}, versions: { modules: "115" } }), undefined);
    assert.equal(sqliteNativeBinding({ env: { [ELECTRON_SQLITE_BINDING_ENV]: "/somewhere/better_sqlite3.node" }, versions: { modules: "115" } }), undefined);
    assert.equal(sqliteNativeBinding(), undefined); // this test process is Node
  });

  it("is the Electron build the shell names, under Electron", () => {
    const file = electronNative({ electron: "41.7.1", modules: "145" });
    assert.equal(sqliteNativeBinding({ env: { [ELECTRON_SQLITE_BINDING_ENV]: file }, versions: ELECTRON }), file);
  });

  it("fails with the command to run when the Electron build is missing", () => {
    const file = electronNative(null, "none");
    assert.throws(
      () => sqliteNativeBinding({ env: { [ELECTRON_SQLITE_BINDING_ENV]: file }, versions: ELECTRON }),
      (error: Error) => error instanceof SqliteBindingError && error.message.includes(file) && error.message.includes("`npm run rebuild:electron`"),
    );
  });

  it("fails with the command to run when the build is for another Electron's ABI", () => {
    const file = electronNative({ electron: "40.0.0", modules: "143" });
    assert.throws(
      () => sqliteNativeBinding({ env: { [ELECTRON_SQLITE_BINDING_ENV]: file }, versions: ELECTRON }),
      (error: Error) =>
        error instanceof SqliteBindingError && /Electron 40\.0\.0 \(ABI 143\), this is Electron 41\.7\.1 \(ABI 145\)/.test(error.message) && error.message.includes("npm run rebuild:electron"),
    );
  });

  it("fails clearly under Electron when the shell did not say where the build is", () => {
    assert.throws(() => sqliteNativeBinding({ env: {}, versions: ELECTRON }), (error: Error) => error instanceof SqliteBindingError && error.message.includes(ELECTRON_SQLITE_BINDING_ENV) && error.message.includes("npm run app"));
  });
});

/**
 * The real openers (the TypeORM data source and the collection index) in a process that looks
 * like Electron's: process.versions.electron set, the ABI being this Node's so the stand-in
 * (a copy of Node's build in another folder) can load. /proc/self/maps tells which file was loaded.
 */
function runAsElectron(bindingFile: string): { status: number | null; out: string; err: string } {
  const dataDir = tempDir();
  dirs.push(dataDir);
  const script = `
    Object.defineProperty(process.versions, "electron", { value: "41.7.1", enumerable: true });
    const fs = require("node:fs");
    const { openDatabase } = require(${JSON.stringify(path.resolve(__dirname, "../../server/data/data-source.js"))});
    const { SqliteFtsIndex } = require(${JSON.stringify(path.resolve(__dirname, "../../server/search/sqlite/sqlite-fts-index.js"))});
    const loaded = () => fs.readFileSync("/proc/self/maps", "utf8").split("\\n").filter((l) => l.includes("better_sqlite3.node")).map((l) => l.slice(l.indexOf("/"))).filter((v, i, a) => a.indexOf(v) === i);
    (async () => {
      const results = {};
      try {
        const db = await openDatabase(${JSON.stringify(dataDir)});
        results.database = (await db.query("SELECT count(*) AS n FROM users"))[0].n;
        await db.destroy();
      } catch (error) { results.database = error.message; }
      try {
        const index = new SqliteFtsIndex({ dir: ${JSON.stringify(path.join(dataDir, "indexes"))} });
        await index.upsertDocuments("00000000-0000-4000-8000-000000000001", [{ sourceId: "s", path: "a.txt", title: "a", size: 1, modifiedAt: new Date(0), version: null, chunks: [{ chunkIndex: 0, text: "hello" }] }]);
        results.index = (await index.search("00000000-0000-4000-8000-000000000001", "hello", 5)).length;
        await index.close();
      } catch (error) { results.index = error.message; }
      results.loaded = loaded();
      results.databaseFile = fs.existsSync(${JSON.stringify(path.join(dataDir, "sluice.db"))});
      process.stdout.write(JSON.stringify(results));
    })();
  `;
  const run = spawnSync(process.execPath, ["-e", script], { env: { ...process.env, [ELECTRON_SQLITE_BINDING_ENV]: bindingFile }, encoding: "utf8", timeout: 60_000 });
  return { status: run.status, out: run.stdout, err: run.stderr };
}

describe("every SQLite opener under Electron", { skip: process.platform !== "linux" && "reads /proc/self/maps" }, () => {
  it("loads the build the shell names, not node_modules' build", () => {
    const file = electronNative({ electron: "41.7.1", modules: process.versions.modules });
    const run = runAsElectron(file);
    assert.equal(run.status, 0, run.err);
    const results = JSON.parse(run.out) as { database: unknown; index: unknown; loaded: string[] };
    assert.equal(results.database, 0);
    assert.equal(results.index, 1);
    assert.deepEqual(results.loaded, [fs.realpathSync(file)]);
  });

  it("stops at a missing build with the command to run, before TypeORM creates anything", () => {
    const file = electronNative(null, "none");
    const run = runAsElectron(file);
    assert.equal(run.status, 0, run.err);
    const results = JSON.parse(run.out) as { database: string; index: string; loaded: string[]; databaseFile: boolean };
    assert.match(results.database, /No better-sqlite3 build for Electron at .*: run `npm run rebuild:electron`/);
    assert.match(results.index, /No better-sqlite3 build for Electron at .*: run `npm run rebuild:electron`/);
    assert.deepEqual(results.loaded, []);
    assert.equal(results.databaseFile, false);
  });
});
