import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { loadConfig } from "../../server/config";
import { settingsTable } from "../../server/settings";
import { CONFIGURATION_DOC, configurationMarkdown } from "../../server/config-docs";

const ROOT = path.resolve(__dirname, "..", "..", __filename.endsWith(".ts") ? "" : "..");

describe("docs/configuration.md", () => {
  it("is what `npm run docs:config` writes from config.ts's settings table (run it after changing a setting)", () => {
    const committed = fs.readFileSync(path.join(ROOT, CONFIGURATION_DOC), "utf8");
    assert.equal(committed, configurationMarkdown());
  });

  it("lists every variable the parser reads, each once, with a description", () => {
    const rows = settingsTable();
    const names = rows.map((row) => row.name);
    assert.equal(new Set(names).size, names.length);
    for (const row of rows) assert.ok(row.description.length > 0, row.name);
    for (const name of ["PORT", "DATABASE_URL", "REDIS_URL", "SEARCH_QUEUE_LIMIT", "SEARCH_CACHE_MB", "MIN_FREE_DISK_MB"]) assert.ok(names.includes(name), name);
  });

  it("shows the defaults the parser applies: each documented default, read back, is what unset gives", () => {
    for (const row of settingsTable()) {
      if (row.default === undefined) continue;
      assert.deepEqual(loadConfig({ [row.name]: row.default }), loadConfig({}), row.name);
    }
  });
});
