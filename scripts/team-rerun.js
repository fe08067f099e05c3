// Which integration test files `npm test` (scripts/test.js) runs a second time on the team-server
// back ends (PostgreSQL and, where installed, Redis), and which it leaves out.
//
// Re-run: the files whose back end that environment switches, i.e. those that start a Sluice server
// through the fixtures (startSluice, useSluice, useHostileSmb) or ask onPostgres(). The others (a SQLite file, both
// engines side by side, Samba alone) would only run the same test twice.
// Left out, although they switch: the files marked `// npm test: once` in their first lines, with the
// reason on the line after, whose tests exercise nothing that differs between the back ends
// (docs/decisions/0522-files-run-once.md).
const fs = require("node:fs");
const path = require("node:path");

// useHostileSmb starts a Sluice server (with useSluice) beside the hostile fake.
const SWITCHES_BACK_END = /\b(startSluice|useSluice|useHostileSmb|onPostgres)\(/;
const ONCE_MARKER = "// npm test: once";
/** The marker counts only among a file's first lines, where a reader meets it. */
const MARKER_LINES = 5;

/**
 * Whether a test file's source is marked to run once. A marker without its reason (a comment on the
 * next line) is an error, not a silent choice: the reason is what the next engineer checks.
 */
function runsOnce(source, file = "a test file") {
  const lines = source.split("\n");
  const at = lines.slice(0, MARKER_LINES).findIndex((line) => line.trim() === ONCE_MARKER);
  if (at < 0) return false;
  const reason = (lines[at + 1] ?? "").trim();
  if (!/^\/\/\s*\S/.test(reason)) throw new Error(`${file}: "${ONCE_MARKER}" needs its reason as a comment on the next line`);
  return true;
}

/**
 * The compiled integration files to run again, and those the marker left out. `sourceOf` maps a
 * compiled file to the TypeScript source it was built from (what is read).
 */
function teamRerun(compiledFiles, sourceOf) {
  const rerun = [];
  const once = [];
  for (const file of compiledFiles) {
    if (!file.includes(`${path.sep}integration${path.sep}`)) continue;
    const source = fs.readFileSync(sourceOf(file), "utf8");
    if (!SWITCHES_BACK_END.test(source)) continue;
    (runsOnce(source, sourceOf(file)) ? once : rerun).push(file);
  }
  return { rerun, once };
}

module.exports = { ONCE_MARKER, runsOnce, teamRerun };
