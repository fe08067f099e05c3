// `npm run size`: the desktop package's production footprint, measured by electron-builder
// itself (its `--dir` target, so its own file filters and production-dependency walk) with a
// stand-in Electron distribution, since the real one cannot be downloaded everywhere. Prints
// two packs: "before" is electron-builder.yml without its exclusion patterns and without the
// separate Electron build (what the package shipped before those were added), "after" is the
// file as it is. The Electron binary itself (~200 MB, the same for any app) is not counted.
const { execFileSync } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { BINDING_FILE, BUILD_INFO_FILE, ROOT, buildProblem, nativeDir, wantedBuild } = require("./electron-native");

function loadConfig() {
  const yaml = require(require.resolve("js-yaml", { paths: [path.dirname(require.resolve("electron-builder/package.json", { paths: [ROOT] }))] }));
  return yaml.load(fs.readFileSync(path.join(ROOT, "electron-builder.yml"), "utf8"));
}

/** The Electron build to pack: electron-native/ if built, else Node's build of the same source, labelled. */
function nativeBuild(work) {
  const wanted = wantedBuild();
  if (!buildProblem(nativeDir(), wanted)) return { dir: nativeDir(), label: "electron-native/ (the Electron build)" };
  const dir = path.join(work, "native-stand-in");
  fs.mkdirSync(dir);
  fs.copyFileSync(path.join(path.dirname(require.resolve("better-sqlite3/package.json", { paths: [ROOT] })), "build", "Release", BINDING_FILE), path.join(dir, BINDING_FILE));
  fs.writeFileSync(path.join(dir, BUILD_INFO_FILE), JSON.stringify(wanted));
  return { dir, label: "stand-in: Node's build of the same better-sqlite3 (no Electron build here)" };
}

/** Runs electron-builder --dir with `config`; answers the resources/ folder it made. */
function pack(name, config, work, env) {
  const configFile = path.join(work, `${name}.json`);
  fs.writeFileSync(configFile, JSON.stringify(config));
  const electronDist = path.join(work, "electron-stand-in");
  if (!fs.existsSync(electronDist)) {
    fs.mkdirSync(electronDist);
    fs.writeFileSync(path.join(electronDist, "electron"), "#!/bin/sh\n", { mode: 0o755 });
  }
  const output = path.join(work, name);
  const cli = path.join(path.dirname(require.resolve("electron-builder/package.json", { paths: [ROOT] })), "cli.js");
  execFileSync(
    process.execPath,
    [cli, "--linux", "dir", `--${process.arch}`, "--config", configFile, `-c.electronDist=${electronDist}`, `-c.electronVersion=${wantedBuild().electron}`, `-c.directories.output=${output}`],
    { cwd: ROOT, env: { ...process.env, ...env }, stdio: ["ignore", "ignore", "inherit"] },
  );
  return path.join(output, `linux${process.arch === "x64" ? "" : `-${process.arch}`}-unpacked`, "resources");
}

function walk(dir, visit, prefix = "") {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) walk(full, visit, `${prefix}${entry.name}/`);
    else visit(`${prefix}${entry.name}`, fs.statSync(full).size);
  }
}

/** Bytes and files per part: what app.asar holds (its header lists every file) and what sits beside it. */
function measure(resources) {
  const parts = new Map();
  const add = (part, size) => {
    const p = parts.get(part) ?? { bytes: 0, files: 0 };
    p.bytes += size;
    p.files += 1;
    parts.set(part, p);
  };
  const partOf = (file) => (file.startsWith("node_modules/") ? "node_modules" : file.startsWith("renderer/dist/") ? "renderer/dist" : /^dist\/[^/]+\//.test(file) ? file.split("/").slice(0, 2).join("/") : file);
  const asar = require(require.resolve("@electron/asar", { paths: [path.dirname(require.resolve("electron-builder/package.json", { paths: [ROOT] }))] }));
  const header = asar.getRawHeader(path.join(resources, "app.asar")).header;
  const inAsar = (node, file) => {
    if (node.files) for (const [name, child] of Object.entries(node.files)) inAsar(child, file ? `${file}/${name}` : name);
    else if (!node.link && !node.unpacked) add(`app.asar: ${partOf(file)}`, node.size ?? 0);
  };
  inAsar(header, "");
  if (fs.existsSync(path.join(resources, "app.asar.unpacked"))) walk(path.join(resources, "app.asar.unpacked"), (file, size) => add(`app.asar.unpacked: ${partOf(file)}`, size));
  if (fs.existsSync(path.join(resources, "electron-native"))) walk(path.join(resources, "electron-native"), (_file, size) => add("electron-native", size));
  return parts;
}

function print(title, parts) {
  const mb = (bytes) => `${(bytes / 1e6).toFixed(1).padStart(7)} MB`;
  process.stdout.write(`\n${title}\n`);
  let bytes = 0;
  let files = 0;
  for (const [part, p] of [...parts].sort((a, b) => a[0].localeCompare(b[0]))) {
    process.stdout.write(`  ${part.padEnd(40)}${mb(p.bytes)}  ${String(p.files).padStart(6)} files\n`);
    bytes += p.bytes;
    files += p.files;
  }
  process.stdout.write(`  ${"total".padEnd(40)}${mb(bytes)}  ${String(files).padStart(6)} files\n`);
}

function main() {
  require("./build-if-needed").buildIfNeeded();
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "sluice-size-"));
  try {
    const config = loadConfig();
    // npmRebuild stays off in both: a rebuild would replace node_modules' Node build in place.
    const before = { ...config, files: config.files.filter((f) => !f.startsWith("!")), extraResources: [], beforePack: null, npmRebuild: false };
    const native = nativeBuild(work);
    const after = { ...config, extraResources: config.extraResources.map((r) => (r.from === "electron-native" ? { ...r, from: native.dir } : r)) };
    process.stdout.write("packing twice with electron-builder --dir (about a minute)...\n");
    const beforeParts = measure(pack("before", before, work, {}));
    const afterParts = measure(pack("after", after, work, { SLUICE_ELECTRON_NATIVE_DIR: native.dir }));
    print("before (electron-builder.yml without its exclusions and without electron-native/: the package as it was)", beforeParts);
    print(`after (electron-builder.yml as it is; electron-native = ${native.label})`, afterParts);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main();
