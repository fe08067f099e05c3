// The Electron-ABI build of better-sqlite3: where it lives, what it must have been built for,
// and the packaging check. Used by scripts/rebuild-native-for-electron.js (build),
// electron-builder.yml (beforePack: never package without a matching build) and main/ (path).
// The server side (which build a process loads) is server/data/sqlite-binding.ts.
const fs = require("node:fs");
const path = require("node:path");

const ROOT = path.resolve(__dirname, "..");
const BINDING_FILE = "better_sqlite3.node";
const BUILD_INFO_FILE = "build-info.json"; // the same name server/data/sqlite-binding.ts reads

/** electron-native/ beside package.json; SLUICE_ELECTRON_NATIVE_DIR moves it (tests). */
function nativeDir(env = process.env) {
  return env.SLUICE_ELECTRON_NATIVE_DIR ? path.resolve(env.SLUICE_ELECTRON_NATIVE_DIR) : path.join(ROOT, "electron-native");
}

function packageVersion(name) {
  return JSON.parse(fs.readFileSync(require.resolve(`${name}/package.json`, { paths: [ROOT] }), "utf8")).version;
}

/** What the build must match: the installed Electron (and its ABI), better-sqlite3, this platform and arch. */
function wantedBuild(arch = process.arch, platform = process.platform) {
  const electronDir = path.dirname(require.resolve("electron/package.json", { paths: [ROOT] }));
  return {
    electron: packageVersion("electron"),
    // The electron package records its NODE_MODULE_VERSION (145 for Electron 41).
    modules: fs.readFileSync(path.join(electronDir, "abi_version"), "utf8").trim(),
    betterSqlite3: packageVersion("better-sqlite3"),
    platform,
    arch,
  };
}

function readBuild(dir) {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, BUILD_INFO_FILE), "utf8"));
  } catch {
    return null;
  }
}

/** null when dir holds a build matching `wanted`; else why not, with the command that fixes it. */
function buildProblem(dir, wanted) {
  const built = readBuild(dir);
  if (!built || !fs.existsSync(path.join(dir, BINDING_FILE))) {
    return `no better-sqlite3 build for Electron in ${dir}: run \`npm run rebuild:electron\``;
  }
  for (const key of Object.keys(wanted)) {
    if (built[key] !== wanted[key]) {
      return `the better-sqlite3 build in ${dir} has ${key} ${built[key]}, ${wanted[key]} is needed: run \`npm run rebuild:electron\` (on a ${wanted.platform}-${wanted.arch} machine)`;
    }
  }
  return null;
}

/** electron-builder beforePack hook: the package ships electron-native/, so it must match the target. */
async function beforePack(context) {
  const { Arch } = require("electron-builder");
  const problem = buildProblem(nativeDir(), wantedBuild(Arch[context.arch], context.electronPlatformName));
  if (problem) throw new Error(`Cannot package: ${problem}`);
}

module.exports = { ROOT, BINDING_FILE, BUILD_INFO_FILE, nativeDir, wantedBuild, readBuild, buildProblem, beforePack };
