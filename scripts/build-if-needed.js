// Compiles the TypeScript sources into dist/ when dist/ is missing or older than any source file.
const { execFileSync } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");

const root = path.resolve(__dirname, "..");
const SOURCE_DIRS = ["server", "main", "test", "scripts"];

function newestMtime(dir) {
  let newest = 0;
  if (!fs.existsSync(dir)) return newest;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestMtime(full));
    else if (entry.name.endsWith(".ts")) newest = Math.max(newest, fs.statSync(full).mtimeMs);
  }
  return newest;
}

function buildIfNeeded() {
  const marker = path.join(root, "dist", "server", "main.js");
  const built = fs.existsSync(marker) ? fs.statSync(marker).mtimeMs : 0;
  const sources = Math.max(fs.statSync(path.join(root, "tsconfig.json")).mtimeMs, ...SOURCE_DIRS.map((d) => newestMtime(path.join(root, d))));
  if (built >= sources) return;
  process.stdout.write("building (tsc)...\n");
  // typescript's package exports hide bin/tsc from require.resolve; its package.json is exported.
  const tsc = path.join(path.dirname(require.resolve("typescript/package.json", { paths: [root] })), "bin", "tsc");
  execFileSync(process.execPath, [tsc, "-p", path.join(root, "tsconfig.json")], {
    cwd: root,
    stdio: "inherit",
  });
  // tsc leaves untouched outputs with old mtimes; mark the build as fresh.
  const now = new Date();
  fs.utimesSync(marker, now, now);
}

module.exports = { buildIfNeeded };
if (require.main === module) buildIfNeeded();
