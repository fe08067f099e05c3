import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { after, describe, it } from "node:test";
import { electronSqliteBinding } from "../../main/native-binding";
import { pdfiumWasmPath } from "../../server/ingest/parse/formats/pdfium";
import { vecExtensionPath } from "../../server/search/sqlite";
import { tempDir } from "../fixtures/sluice-server";

const ROOT = path.resolve(__dirname, "..", "..", "..");
const SCRIPTS = path.join(ROOT, "scripts");
// Plain JS scripts that run before any build; loaded as they are.
const native = require(path.join(SCRIPTS, "electron-native.js")) as {
  wantedBuild(arch?: string, platform?: string): Record<string, string>;
  beforePack(context: { arch: number; electronPlatformName: string }): Promise<void>;
};
const { Arch } = require("electron-builder") as { Arch: Record<string, number> };

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

function nativeDir(buildInfo: object | null): string {
  const dir = tempDir("sluice-electron-native-");
  dirs.push(dir);
  if (buildInfo) {
    fs.writeFileSync(path.join(dir, "better_sqlite3.node"), "built for Electron");
    fs.writeFileSync(path.join(dir, "build-info.json"), JSON.stringify(buildInfo));
  }
  return dir;
}

function fingerprint(file: string): string {
  const stat = fs.statSync(file);
  return `${crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex")} ${stat.mtimeMs}`;
}

/** A loopback port nothing listens on: the headers "download" is refused at once. */
async function closedPort(): Promise<number> {
  const server = net.createServer().listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function rebuild(outDir: string, ...args: string[]) {
  return spawnSync(process.execPath, [path.join(SCRIPTS, "rebuild-native-for-electron.js"), ...args], {
    cwd: ROOT,
    // An npmrc nodedir pointing at this Node's headers (as on the CI machines) must not be used
    // for an Electron build: set here so the failed-build test holds on every machine.
    env: { ...process.env, SLUICE_ELECTRON_NATIVE_DIR: outDir, npm_config_nodedir: path.dirname(path.dirname(process.execPath)) },
    encoding: "utf8",
    timeout: 120_000,
  });
}

describe("npm run rebuild:electron", () => {
  const nodeBuild = require.resolve("better-sqlite3/build/Release/better_sqlite3.node");

  it("wants a build for the installed Electron's ABI, better-sqlite3, platform and arch", () => {
    const wanted = native.wantedBuild("arm64", "darwin");
    const electron = require("electron/package.json") as { version: string };
    assert.equal(wanted.electron, electron.version);
    assert.match(wanted.modules, /^\d+$/);
    assert.notEqual(wanted.modules, process.versions.modules, "Electron's ABI is not Node's");
    assert.equal(wanted.betterSqlite3, (require("better-sqlite3/package.json") as { version: string }).version);
    assert.equal(wanted.platform, "darwin");
    assert.equal(wanted.arch, "arm64");
  });

  it("does nothing when electron-native/ already matches", () => {
    const dir = nativeDir(native.wantedBuild());
    const before = fingerprint(path.join(dir, "better_sqlite3.node"));
    const run = rebuild(dir);
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /is up to date/);
    assert.equal(fingerprint(path.join(dir, "better_sqlite3.node")), before);
  });

  it("builds in a copy: a failed build leaves node_modules' Node build and the last good build as they were", async () => {
    const dir = nativeDir({ ...native.wantedBuild(), electron: "40.0.0", modules: "143" });
    const lastGood = fingerprint(path.join(dir, "better_sqlite3.node"));
    const nodeBefore = fingerprint(nodeBuild);
    const run = rebuild(dir, "--from-source", `--dist-url=http://127.0.0.1:${await closedPort()}`);
    assert.equal(run.status, 1, `${run.stdout}\n${run.stderr}`);
    assert.match(run.stderr, /Could not build better-sqlite3 for Electron: .*\n.*Electron's headers.*node_modules was not changed/);
    assert.equal(fingerprint(nodeBuild), nodeBefore);
    assert.equal(fingerprint(path.join(dir, "better_sqlite3.node")), lastGood);
    assert.deepEqual(fs.readdirSync(dir).sort(), ["better_sqlite3.node", "build-info.json"]);
  });
});

describe("packaging (electron-builder beforePack)", () => {
  const host = { arch: Arch[process.arch], electronPlatformName: process.platform };
  const withDir = async (dir: string, fn: () => Promise<void>) => {
    const saved = process.env.SLUICE_ELECTRON_NATIVE_DIR;
    process.env.SLUICE_ELECTRON_NATIVE_DIR = dir;
    try {
      await fn();
    } finally {
      if (saved === undefined) delete process.env.SLUICE_ELECTRON_NATIVE_DIR;
      else process.env.SLUICE_ELECTRON_NATIVE_DIR = saved;
    }
  };

  it("refuses to package without an Electron build, naming the command", async () => {
    await withDir(nativeDir(null), () => assert.rejects(native.beforePack(host), /Cannot package: no better-sqlite3 build for Electron in .*: run `npm run rebuild:electron`/));
  });

  it("refuses a build for another target or Electron", async () => {
    const other = process.arch === "arm64" ? "x64" : "arm64";
    await withDir(nativeDir(native.wantedBuild()), () => assert.rejects(native.beforePack({ arch: Arch[other], electronPlatformName: process.platform }), new RegExp(`has arch ${process.arch}, ${other} is needed`)));
    await withDir(nativeDir({ ...native.wantedBuild(), modules: "143" }), () => assert.rejects(native.beforePack(host), /has modules 143, \d+ is needed/));
  });

  it("packages with a matching build", async () => {
    await withDir(nativeDir(native.wantedBuild()), () => native.beforePack(host));
  });

  it("is wired into electron-builder.yml, with no in-place rebuild and the build shipped as a resource", () => {
    const yaml = require(require.resolve("js-yaml", { paths: [path.dirname(require.resolve("electron-builder/package.json"))] })) as { load(text: string): unknown };
    const config = yaml.load(fs.readFileSync(path.join(ROOT, "electron-builder.yml"), "utf8")) as Record<string, unknown>;
    assert.equal(config.npmRebuild, false);
    assert.equal(config.beforePack, "./scripts/electron-native.js");
    assert.deepEqual(config.extraResources, [{ from: "electron-native", to: "electron-native", filter: ["better_sqlite3.node", "build-info.json"] }]);
    for (const excluded of ["!**/*.map", "!**/*.{ts,cts,mts,tsbuildinfo}", "!node_modules/better-sqlite3/{build,deps,src}/**", "!node_modules/{koffi,@koromix}/**"]) {
      assert.ok((config.files as string[]).includes(excluded), excluded);
    }
  });
});

describe("the shell's path to the Electron build", () => {
  it("is resources/electron-native when packaged and electron-native/ in a checkout", () => {
    assert.equal(electronSqliteBinding(true, "/opt/Sluice/resources", "/src/sluice"), path.join("/opt/Sluice/resources", "electron-native", "better_sqlite3.node"));
    assert.equal(electronSqliteBinding(false, "/usr/lib/electron/resources", "/src/sluice"), path.join("/src/sluice", "electron-native", "better_sqlite3.node"));
  });
});

describe("sqlite-vec in the packaged app", () => {
  const builderDir = path.dirname(require.resolve("electron-builder/package.json"));
  const yaml = require(require.resolve("js-yaml", { paths: [builderDir] })) as { load(text: string): unknown };
  const { minimatch } = require(require.resolve("minimatch", { paths: [builderDir] })) as { minimatch(file: string, pattern: string, options?: object): boolean };
  const config = yaml.load(fs.readFileSync(path.join(ROOT, "electron-builder.yml"), "utf8")) as { files: string[]; asarUnpack: string[] };
  // sqlite-vec exports no ./package.json: read it from node_modules.
  const vec = JSON.parse(fs.readFileSync(path.join(ROOT, "node_modules", "sqlite-vec", "package.json"), "utf8")) as { optionalDependencies: Record<string, string> };
  const platforms = Object.keys(vec.optionalDependencies);
  const extension = (pkg: string) => (pkg.includes("windows") ? "dll" : pkg.includes("darwin") ? "dylib" : "so");

  it("every platform's package is in the lockfile, so a build on that platform installs it", () => {
    assert.ok(platforms.length >= 5, platforms.join(","));
    const lock = JSON.parse(fs.readFileSync(path.join(ROOT, "package-lock.json"), "utf8")) as { packages: Record<string, unknown> };
    for (const pkg of platforms) assert.ok(lock.packages[`node_modules/${pkg}`], `${pkg} is locked`);
  });

  it("each platform's loadable library is packaged (no exclusion drops it) and unpacked from app.asar", () => {
    const options = { dot: true };
    assert.ok(config.files.some((pattern) => !pattern.startsWith("!") && minimatch("node_modules/sqlite-vec/index.cjs", pattern, options)), "the sqlite-vec package is packaged");
    for (const pkg of platforms) {
      const file = `node_modules/${pkg}/vec0.${extension(pkg)}`;
      assert.ok(config.files.some((pattern) => !pattern.startsWith("!") && minimatch(file, pattern, options)), `${file} is among the files`);
      const excludedBy = config.files.filter((pattern) => pattern.startsWith("!") && minimatch(file, pattern.slice(1), options));
      assert.deepEqual(excludedBy, [], `${file} is not excluded`);
      assert.ok(config.asarUnpack.some((pattern) => minimatch(file, pattern, options)), `${file} is unpacked: SQLite loads it through the OS`);
    }
  });

  it("is loaded from app.asar.unpacked when packaged, and from where it is in a checkout", () => {
    const packaged = path.join("/opt/Sluice/resources", "app.asar", "node_modules", "sqlite-vec-linux-x64", "vec0.so");
    assert.equal(vecExtensionPath(packaged), path.join("/opt/Sluice/resources", "app.asar.unpacked", "node_modules", "sqlite-vec-linux-x64", "vec0.so"));
    const checkout = path.join("/src/sluice", "node_modules", "sqlite-vec-linux-x64", "vec0.so");
    assert.equal(vecExtensionPath(checkout), checkout);
    // This machine's own package is installed and its file is there.
    assert.ok(fs.existsSync(vecExtensionPath()), vecExtensionPath());
  });
});

describe("PDFium's WebAssembly in the packaged app", () => {
  const builderDir = path.dirname(require.resolve("electron-builder/package.json"));
  const yaml = require(require.resolve("js-yaml", { paths: [builderDir] })) as { load(text: string): unknown };
  const { minimatch } = require(require.resolve("minimatch", { paths: [builderDir] })) as { minimatch(file: string, pattern: string, options?: object): boolean };
  const config = yaml.load(fs.readFileSync(path.join(ROOT, "electron-builder.yml"), "utf8")) as { files: string[]; asarUnpack: string[] };
  const file = "node_modules/@embedpdf/pdfium/dist/pdfium.wasm";

  it("ships inside the npm package, is packaged (no exclusion drops it) and unpacked from app.asar", () => {
    assert.ok(fs.existsSync(path.join(ROOT, file)), "the .wasm comes with the package: nothing is downloaded");
    const options = { dot: true };
    assert.ok(config.files.some((pattern) => !pattern.startsWith("!") && minimatch(file, pattern, options)), `${file} is among the files`);
    assert.deepEqual(config.files.filter((pattern) => pattern.startsWith("!") && minimatch(file, pattern.slice(1), options)), [], `${file} is not excluded`);
    assert.ok(config.asarUnpack.some((pattern) => minimatch(file, pattern, options)), `${file} is unpacked: parser threads read it from disk`);
  });

  it("is read from app.asar.unpacked when packaged, and from where it is in a checkout", () => {
    const packaged = path.join("/opt/Sluice/resources", "app.asar", "node_modules", "@embedpdf", "pdfium", "dist", "pdfium.wasm");
    assert.equal(pdfiumWasmPath(packaged), path.join("/opt/Sluice/resources", "app.asar.unpacked", "node_modules", "@embedpdf", "pdfium", "dist", "pdfium.wasm"));
    assert.equal(pdfiumWasmPath(), path.join(ROOT, file));
  });
});
