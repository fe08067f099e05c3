import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, describe, it } from "node:test";
import { tempDir } from "../fixtures/sluice-server";

const ROOT = path.resolve(__dirname, "..", "..", "..");
// A plain JS script that runs before any build; loaded as it is.
const { ONCE_MARKER, runsOnce, teamRerun } = require(path.join(ROOT, "scripts", "team-rerun.js")) as {
  ONCE_MARKER: string;
  runsOnce(source: string, file?: string): boolean;
  teamRerun(compiledFiles: string[], sourceOf: (file: string) => string): { rerun: string[]; once: string[] };
};

const dir = tempDir("sluice-team-rerun-");
after(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Writes a source file under dir/<folder>/ and answers the compiled name standing for it. */
function file(folder: string, name: string, source: string): string {
  fs.mkdirSync(path.join(dir, folder), { recursive: true });
  fs.writeFileSync(path.join(dir, folder, `${name}.ts`), source);
  return path.join(dir, folder, `${name}.js`);
}
const sourceOf = (compiled: string) => compiled.replace(/\.js$/, ".ts");

describe("the team-server re-run's files (scripts/team-rerun.js)", () => {
  it("re-runs the integration files that switch the back end, leaves out those marked once, and ignores the rest", () => {
    const server = file("integration", "server", 'const sluice = useSluice();\n');
    const engines = file("integration", "engines", 'onPostgres("x", () => {});\n');
    const hostile = file("integration", "hostile", "const { hostile, sluice } = useHostileSmb({ checkDeadlineS: 6, smbTimeoutMs: 1000 });\n");
    const once = file("integration", "once", `${ONCE_MARKER}\n// Why: nothing here differs between the back ends.\nstartSluice();\n`);
    const sqliteOnly = file("integration", "sqlite-only", "openDatabase(dir);\n");
    const unit = file("unit", "unit", "startSluice();\n");
    assert.deepEqual(teamRerun([server, engines, hostile, once, sqliteOnly, unit], sourceOf), { rerun: [server, engines, hostile], once: [once] });
  });

  it("counts the marker only in a file's first lines, as a whole line", () => {
    const reason = "// Why: a reason.";
    assert.equal(runsOnce(`import x from "y";\n${ONCE_MARKER}\n${reason}\n`), true);
    assert.equal(runsOnce(`${"\n".repeat(5)}${ONCE_MARKER}\n${reason}\n`), false, "below the first lines");
    assert.equal(runsOnce(`// not ${ONCE_MARKER}, said in passing\n`), false);
    assert.equal(runsOnce("startSluice();\n"), false);
  });

  it("refuses a marker without its reason on the next line, naming the file", () => {
    for (const next of ["", "startSluice();", "//"]) {
      assert.throws(() => runsOnce(`${ONCE_MARKER}\n${next}\n`, "x.test.ts"), /x\.test\.ts: "\/\/ npm test: once" needs its reason/, JSON.stringify(next));
    }
  });

  it("the files marked in this repository each give their reason", () => {
    const integration = path.join(ROOT, "test", "integration");
    const marked = fs.readdirSync(integration).filter((name) => name.endsWith(".test.ts") && runsOnce(fs.readFileSync(path.join(integration, name), "utf8"), name));
    assert.ok(marked.includes("ocr-ingestion.test.ts"), marked.join(", "));
  });
});
