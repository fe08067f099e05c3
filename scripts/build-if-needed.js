// Builds in order, each step only when its inputs changed: the TypeScript sources into dist/ (tsc);
// from the built server, the UI's API client (scripts/openapi-client.js: the OpenAPI document, its
// types and form rules under renderer/src/generated/); then the React UI into renderer/dist/ (tsc + vite).
const { execFileSync } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");

const root = path.resolve(__dirname, "..");
const SOURCE_DIRS = ["server", "main", "test", "scripts"];

function newestMtime(dir, matches = (name) => name.endsWith(".ts")) {
  if (!fs.existsSync(dir)) return 0;
  // The folder's own time too: a file moved in (git mv keeps its time) or deleted changes only that.
  let newest = fs.statSync(dir).mtimeMs;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestMtime(full, matches));
    else if (matches(entry.name)) newest = Math.max(newest, fs.statSync(full).mtimeMs);
  }
  return newest;
}

/** A package's own script, by path: package exports may hide it from require.resolve, its package.json is exported. */
function packageBin(pkg, relative) {
  return path.join(path.dirname(require.resolve(`${pkg}/package.json`, { paths: [root] })), relative);
}

const RENDERER = path.join(root, "renderer");
const RENDERER_INPUTS = ["index.html", "vite.config.mts", "tsconfig.json"].map((f) => path.join(RENDERER, f));
const GENERATED = path.join(RENDERER, "src", "generated");
const GENERATED_MARKER = path.join(GENERATED, "api-schema.d.ts");

function typecheckRenderer() {
  execFileSync(process.execPath, [packageBin("typescript", "bin/tsc"), "-p", path.join(RENDERER, "tsconfig.json")], { cwd: root, stdio: "inherit" });
}

/**
 * Writes the UI's API client from the built server when the server was rebuilt or the client is
 * missing. In a child process: it starts the server and waits for it, and this script is synchronous.
 */
function generateApiClientIfNeeded(serverBuilt) {
  if (!serverBuilt && fs.existsSync(GENERATED_MARKER)) return;
  process.stdout.write("generating the UI's API client from /api/openapi.json...\n");
  execFileSync(process.execPath, [path.join(__dirname, "openapi-client.js")], { cwd: root, stdio: "inherit" });
}

/** Builds the UI when its sources (its generated API client among them) changed; true when it did. */
function buildRendererIfNeeded() {
  const marker = path.join(RENDERER, "dist", "index.html");
  if (!fs.existsSync(path.join(RENDERER, "index.html"))) return false;
  const built = fs.existsSync(marker) ? fs.statSync(marker).mtimeMs : 0;
  const sources = Math.max(
    newestMtime(path.join(RENDERER, "src"), () => true),
    ...RENDERER_INPUTS.filter((f) => fs.existsSync(f)).map((f) => fs.statSync(f).mtimeMs),
  );
  if (built >= sources) return false;
  process.stdout.write("building the UI (tsc + vite)...\n");
  typecheckRenderer();
  execFileSync(process.execPath, [packageBin("vite", "bin/vite.js"), "build", "renderer", "--logLevel", "warn"], { cwd: root, stdio: "inherit" });
  return true;
}

/** Removes compiled files whose TypeScript source is gone, so a deleted test or module does not live on in dist/. */
function pruneStaleOutputs(dir) {
  if (!fs.existsSync(dir)) return;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) pruneStaleOutputs(full);
    else if (/\.js(\.map)?$/.test(entry.name)) {
      const source = path.join(root, path.relative(path.join(root, "dist"), full)).replace(/\.js(\.map)?$/, ".ts");
      if (!fs.existsSync(source)) fs.rmSync(full);
    }
  }
}

/** Compiles the server, main and tests when their sources changed; true when it did. */
function compileIfNeeded() {
  for (const dir of SOURCE_DIRS) pruneStaleOutputs(path.join(root, "dist", dir));
  const marker = path.join(root, "dist", "server", "main.js");
  const built = fs.existsSync(marker) ? fs.statSync(marker).mtimeMs : 0;
  const sources = Math.max(fs.statSync(path.join(root, "tsconfig.json")).mtimeMs, ...SOURCE_DIRS.map((d) => newestMtime(path.join(root, d))));
  if (built >= sources) return false;
  process.stdout.write("building (tsc)...\n");
  execFileSync(process.execPath, [packageBin("typescript", "bin/tsc"), "-p", path.join(root, "tsconfig.json")], {
    cwd: root,
    stdio: "inherit",
  });
  // tsc leaves untouched outputs with old mtimes; mark the build as fresh.
  const now = new Date();
  fs.utimesSync(marker, now, now);
  return true;
}

function buildIfNeeded() {
  const serverBuilt = compileIfNeeded();
  if (!fs.existsSync(path.join(RENDERER, "index.html"))) return;
  generateApiClientIfNeeded(serverBuilt);
  const rendererBuilt = buildRendererIfNeeded();
  // The UI's API types come from the server's document and presenters (server/wire-types.ts): a
  // server change is checked against the UI as well, so a renamed field fails here, not in a browser.
  if (serverBuilt && !rendererBuilt) {
    process.stdout.write("checking the UI against the server's types (tsc)...\n");
    typecheckRenderer();
  }
}

module.exports = { buildIfNeeded, buildRendererIfNeeded };
if (require.main === module) buildIfNeeded();
