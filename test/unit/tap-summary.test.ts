import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { after, describe, it } from "node:test";
import { tempDir } from "../fixtures/sluice-server";

const ROOT = path.resolve(__dirname, "..", "..", "..");
// A plain JS script that runs before any build; loaded as it is.
const { summary } = require(path.join(ROOT, "scripts", "tap-summary.js")) as {
  summary(runs: { name: string; status: number; tapFile: string }[]): string;
};

const dir = tempDir("sluice-tap-summary-");
after(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Runs a test file with Node's runner as scripts/test.js does, its TAP also written to a file. */
function runTests(name: string, source: string): { status: number; tapFile: string } {
  const file = path.join(dir, `${name}.test.js`);
  fs.writeFileSync(file, source);
  const tapFile = path.join(dir, `${name}.tap`);
  // Without NODE_TEST_CONTEXT the child is a runner of its own, as under scripts/test.js, not a
  // subtest reporting to this one.
  const { NODE_TEST_CONTEXT: _, ...env } = process.env;
  const run = spawnSync(process.execPath, ["--test", "--test-reporter=tap", `--test-reporter-destination=${tapFile}`, file], { encoding: "utf8", env });
  return { status: run.status ?? 1, tapFile };
}

describe("npm test's closing summary", () => {
  it("names each failed test with its suite and error, and each run's counts, but no passing test", () => {
    const sqlite = runTests(
      "sqlite",
      `const { describe, it } = require("node:test");
       const assert = require("node:assert");
       describe("a suite", () => {
         it("passes quietly", () => {});
         it("fails loudly", () => { assert.equal(1, 2, "one is not two"); });
       });`,
    );
    const team = runTests("team", `require("node:test").it("also passes", () => {});`);
    const text = summary([
      { name: "SQLite", ...sqlite },
      { name: "PostgreSQL", ...team },
    ]);
    assert.match(text, /SQLite: exit 1; 2 tests, 1 pass, 1 fail/);
    assert.match(text, /PostgreSQL: exit 0; 1 tests, 1 pass, 0 fail/);
    assert.match(text, /# SQLite: not ok - a suite > fails loudly/);
    assert.match(text, /one is not two/);
    assert.doesNotMatch(text, /passes quietly|also passes/);
    // The suite failed only because of its test: it is not listed again as a failure of its own.
    assert.doesNotMatch(text, /not ok - a suite\n/);
  });

  it("says so when a run left no TAP at all (it could not start)", () => {
    const text = summary([{ name: "keychain", status: 1, tapFile: path.join(dir, "missing.tap") }]);
    assert.match(text, /keychain: exit 1; no test counts in its TAP/);
    assert.doesNotMatch(text, /NaN/);
  });
});
