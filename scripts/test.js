// `npm test`: build, then run every test file with Node's test runner. The keychain
// tests run a second time inside a private D-Bus session with an unlocked
// gnome-keyring (test/fixtures/with-keyring.sh) when those programs are installed.
const { spawnSync } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");

const root = path.resolve(__dirname, "..");
require("./build-if-needed").buildIfNeeded();

function testFiles(dir) {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(full);
    return entry.name.endsWith(".test.js") ? [full] : [];
  });
}

const only = process.argv.slice(2);
const files = testFiles(path.join(root, "dist", "test"))
  .filter((f) => !f.includes(`${path.sep}e2e${path.sep}`) || process.env.SLUICE_E2E !== "0")
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();

function run(command, args) {
  const result = spawnSync(command, args, { cwd: root, stdio: "inherit", env: process.env });
  return result.status ?? 1;
}

let status = run(process.execPath, ["--test", "--test-concurrency=2", ...files]);

const keychainTests = files.filter((f) => f.includes("keychain"));
const haveKeyring = ["dbus-run-session", "gnome-keyring-daemon"].every(
  (bin) => spawnSync("sh", ["-c", `command -v ${bin}`]).status === 0,
);
if (keychainTests.length && haveKeyring && process.platform === "linux") {
  process.stdout.write("\n# keychain tests inside a D-Bus session with gnome-keyring\n");
  const keyring = run("bash", [path.join(root, "test", "fixtures", "with-keyring.sh"), process.execPath, "--test", ...keychainTests]);
  status = status || keyring;
}
process.exit(status);
