// The closing lines of `npm test`: each run's counts, then every failed test again with its
// error, read back from the TAP file the run wrote beside its output (scripts/test.js).
const fs = require("node:fs");

/** The failed tests of one TAP file: each leaf "not ok" with the indented YAML block under it. */
function failures(tap) {
  const lines = tap.split("\n");
  const found = [];
  const names = [];
  for (let i = 0; i < lines.length; i++) {
    const subtest = /^(\s*)# Subtest: (.*)$/.exec(lines[i]);
    if (subtest) {
      const depth = subtest[1].length / 4;
      names.length = depth;
      names[depth] = subtest[2];
      continue;
    }
    const failed = /^(\s*)not ok \d+ - (.*)$/.exec(lines[i]);
    if (!failed) continue;
    const indent = failed[1];
    const block = [];
    for (let j = i + 1; j < lines.length && lines[j].startsWith(`${indent}  `) && lines[j].trim() !== "..."; j++) block.push(lines[j].slice(indent.length + 2));
    // A suite that failed only because a test inside it did adds nothing to that test's lines.
    if (block.some((l) => /^failureType: '?subtestsFailed/.test(l.trim()))) continue;
    const depth = indent.length / 4;
    found.push({ path: [...names.slice(0, depth), failed[2]].filter(Boolean).join(" > "), block: block.slice(0, 40) });
  }
  return found;
}

function counts(tap) {
  const count = (key) => Number(new RegExp(`^# ${key} (\\d+)$`, "m").exec(tap)?.[1] ?? NaN);
  return { tests: count("tests"), pass: count("pass"), fail: count("fail"), skipped: count("skipped"), cancelled: count("cancelled") };
}

/** The summary of every run: `runs` holds { name, status, tapFile }. */
function summary(runs) {
  const out = ["", "# npm test: every run"];
  const failedLines = [];
  for (const { name, status, tapFile } of runs) {
    const tap = fs.existsSync(tapFile) ? fs.readFileSync(tapFile, "utf8") : "";
    const c = counts(tap);
    // No counts at all: the run wrote no TAP (it could not start, or died before its end).
    const line = Number.isNaN(c.tests) ? "no test counts in its TAP (it did not start, or stopped before its end)" : `${c.tests} tests, ${c.pass} pass, ${c.fail} fail, ${c.cancelled} cancelled, ${c.skipped} skipped`;
    out.push(`#   ${name}: exit ${status}; ${line}`);
    for (const f of failures(tap)) failedLines.push(`# ${name}: not ok - ${f.path}`, ...f.block.map((l) => `#     ${l}`));
  }
  if (failedLines.length) out.push("# failed tests:", ...failedLines);
  return `${out.join("\n")}\n`;
}

module.exports = { summary };
