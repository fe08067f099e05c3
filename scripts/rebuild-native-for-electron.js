// `npm run rebuild:electron`: builds better-sqlite3 for the installed Electron's ABI into
// electron-native/ (better_sqlite3.node + build-info.json). The build happens in a temporary
// copy of the package, so node_modules keeps Node's build for `npm start` and `npm test`.
// Does nothing when electron-native/ already matches (Electron, better-sqlite3, platform, arch).
//   --force        rebuild even if up to date
//   --from-source  skip the prebuilt-binary download, compile (needs Electron's headers)
//   --dist-url=URL where to fetch Electron's headers (a mirror); @electron/rebuild's default otherwise
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { BINDING_FILE, BUILD_INFO_FILE, ROOT, buildProblem, nativeDir, wantedBuild } = require("./electron-native");

/** better-sqlite3's sources as published (no build/): what node-gyp needs to compile it. */
const SOURCES = ["package.json", "binding.gyp", "lib", "src", "deps"];

function option(name) {
  const arg = process.argv.find((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  if (!arg) return undefined;
  return arg.includes("=") ? arg.slice(arg.indexOf("=") + 1) : true;
}

async function main() {
  const outDir = nativeDir();
  const wanted = wantedBuild();
  if (!option("force") && !buildProblem(outDir, wanted)) {
    process.stdout.write(`electron-native/ is up to date (better-sqlite3 ${wanted.betterSqlite3} for Electron ${wanted.electron}, ABI ${wanted.modules})\n`);
    return;
  }
  process.stdout.write(`building better-sqlite3 ${wanted.betterSqlite3} for Electron ${wanted.electron} (ABI ${wanted.modules}, ${wanted.platform}-${wanted.arch})...\n`);
  const staging = fs.mkdtempSync(path.join(os.tmpdir(), "sluice-electron-native-"));
  try {
    const source = path.dirname(require.resolve("better-sqlite3/package.json", { paths: [ROOT] }));
    const copy = path.join(staging, "node_modules", "better-sqlite3");
    for (const entry of SOURCES) fs.cpSync(path.join(source, entry), path.join(copy, entry), { recursive: true });
    fs.writeFileSync(path.join(staging, "package.json"), JSON.stringify({ name: "electron-native", private: true, dependencies: { "better-sqlite3": wanted.betterSqlite3 } }));

    // An npmrc `nodedir` (npm passes it on as npm_config_nodedir; some machines set it so native
    // modules build offline against the system Node's headers) would make node-gyp compile
    // against Node's headers: a binary for Node's ABI labelled as Electron's. Electron's own
    // headers are the only right ones here.
    for (const key of Object.keys(process.env)) {
      if (key.toLowerCase() === "npm_config_nodedir") delete process.env[key];
    }
    // @electron/rebuild is ESM-only.
    const { rebuild } = await import("@electron/rebuild");
    await rebuild({
      buildPath: staging,
      electronVersion: wanted.electron,
      arch: wanted.arch,
      onlyModules: ["better-sqlite3"],
      force: true,
      buildFromSource: option("from-source") === true,
      ...(typeof option("dist-url") === "string" ? { headerURL: option("dist-url") } : {}),
    });

    // Replace the old build only once the new one exists: a failed build leaves the last good one.
    fs.mkdirSync(outDir, { recursive: true });
    fs.copyFileSync(path.join(copy, "build", "Release", BINDING_FILE), path.join(outDir, `${BINDING_FILE}.tmp`));
    fs.renameSync(path.join(outDir, `${BINDING_FILE}.tmp`), path.join(outDir, BINDING_FILE));
    fs.writeFileSync(path.join(outDir, BUILD_INFO_FILE), `${JSON.stringify(wanted, null, 2)}\n`);
    process.stdout.write(`built ${path.join(outDir, BINDING_FILE)}\n`);
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

main().catch((error) => {
  process.stderr.write(
    `Could not build better-sqlite3 for Electron: ${error.message}\n` +
      "Compiling for Electron needs Electron's headers (downloaded from the Electron headers site, or --dist-url=MIRROR) or a prebuilt binary for this Electron; node_modules was not changed.\n",
  );
  process.exit(1);
});
