// `npm test`: build, then run every test file with Node's test runner. The keychain
// tests run a second time inside a private D-Bus session with an unlocked
// gnome-keyring (test/fixtures/with-keyring.sh) when those programs are installed.
// Then the integration tests that start a Sluice server run again on the team-server back ends
// (PostgreSQL and Redis, started by the tests themselves) when PostgreSQL is installed, but for
// those marked to run once (scripts/team-rerun.js); SLUICE_TEAM_RUN=0 skips that run.
const { spawnSync } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

const root = path.resolve(__dirname, "..");
const { ONCE_MARKER, teamRerun } = require("./team-rerun");
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

function run(command, args, env = {}) {
  const result = spawnSync(command, args, { cwd: root, stdio: "inherit", env: { ...process.env, ...env } });
  return result.status ?? 1;
}

// Each run's TAP also goes to a file, so that the failures of every run are printed again at the
// very end: a CI log that keeps only its tail would otherwise show only the last run's.
const tapDir = fs.mkdtempSync(path.join(os.tmpdir(), "sluice-test-tap-"));
const runs = [];
function testRun(name, command, args, env = {}) {
  const tapFile = path.join(tapDir, `${runs.length}.tap`);
  const at = args.indexOf("--test");
  const withTap = [...args.slice(0, at + 1), "--test-reporter=tap", "--test-reporter-destination=stdout", "--test-reporter=tap", `--test-reporter-destination=${tapFile}`, ...args.slice(at + 1)];
  const status = run(command, withTap, env);
  runs.push({ name, status, tapFile });
  return status;
}

// node --test given no files would search the whole tree itself (dist/test/bench included).
if (only.length > 0 && files.length === 0) {
  process.stderr.write(`No compiled test file matches ${only.map((o) => `"${o}"`).join(", ")} (under dist/test).\n`);
  process.exit(2);
}

let status = testRun("SQLite", process.execPath, ["--test", "--test-concurrency=2", ...files]);

const keychainTests = files.filter((f) => f.includes("keychain"));
const haveKeyring = ["dbus-run-session", "gnome-keyring-daemon"].every(
  (bin) => spawnSync("sh", ["-c", `command -v ${bin}`]).status === 0,
);
if (keychainTests.length && haveKeyring && process.platform === "linux") {
  process.stdout.write("\n# keychain tests inside a D-Bus session with gnome-keyring\n");
  const keyring = testRun("keychain", "bash", [path.join(root, "test", "fixtures", "with-keyring.sh"), process.execPath, "--test", ...keychainTests]);
  status = status || keyring;
}
// The team-server run: the environment that switches the test servers' back ends.
const haveRedis = spawnSync("sh", ["-c", "command -v redis-server"]).status === 0;
// The second run, on PostgreSQL and, where installed, Redis (BullMQ queue): the files
// scripts/team-rerun.js selects.
const TEAM_SERVER_ENV = { SLUICE_TEST_BACKEND: "postgres", ...(haveRedis ? { SLUICE_TEST_REDIS: "1" } : {}) };
const sourceOf = (compiled) => path.join(root, path.relative(path.join(root, "dist"), compiled)).replace(/\.js$/, ".ts");
const { rerun: integrationTests, once } = teamRerun(files, sourceOf);
const pgRoot = "/usr/lib/postgresql";
const havePostgres = fs.existsSync(pgRoot) && fs.readdirSync(pgRoot).some((v) => fs.existsSync(path.join(pgRoot, v, "bin", "postgres")));
if ((integrationTests.length || once.length) && havePostgres && process.env.SLUICE_TEAM_RUN !== "0") {
  process.stdout.write(
    `\n# integration suite on PostgreSQL${haveRedis ? " + Redis" : ""}: ${integrationTests.length} file${integrationTests.length === 1 ? "" : "s"}, ${once.length} left out by "${ONCE_MARKER}"\n`,
  );
  if (integrationTests.length) {
    const team = testRun("PostgreSQL", process.execPath, ["--test", "--test-concurrency=2", ...integrationTests], TEAM_SERVER_ENV);
    status = status || team;
  }
}
process.stdout.write(require("./tap-summary").summary(runs));
fs.rmSync(tapDir, { recursive: true, force: true });
process.exit(status);
