import assert from "node:assert/strict";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import type { DataSource } from "typeorm";
import { openDatabase } from "../../server/data/data-source";
import { Group } from "../../server/data/entities/group.entity";
import { IngestJob } from "../../server/data/entities/ingest-job.entity";
import { ModelRecord } from "../../server/data/entities/model.entity";
import { postgresBinDir, sharedPostgres } from "../fixtures/postgres";

// The SQLite and PostgreSQL migration sets must build the same schema as the app sees it,
// and the entities must read back on PostgreSQL what they wrote, as on SQLite.

const skip = postgresBinDir() ? false : "PostgreSQL is not installed";
const opened: DataSource[] = [];
const dirs: string[] = [];
after(async () => {
  for (const db of opened) await db.destroy();
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

async function both(): Promise<{ sqlite: DataSource; postgres: DataSource }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sluice-schema-"));
  dirs.push(dir);
  const sqlite = await openDatabase(dir);
  const postgres = await openDatabase({ dataDir: dir, databaseUrl: await (await sharedPostgres()).createDatabase() });
  opened.push(sqlite, postgres);
  return { sqlite, postgres };
}

/** table -> sorted "column nullable" lines, and the applied migration names. */
async function shape(db: DataSource): Promise<{ tables: Record<string, string[]>; migrations: string[] }> {
  const tables: Record<string, string[]> = {};
  if (db.options.type === "postgres") {
    const rows = (await db.query(
      `SELECT table_name, column_name, is_nullable FROM information_schema.columns
       WHERE table_schema = 'public' AND table_name NOT LIKE 'search_%' AND table_name <> 'migrations'`,
    )) as { table_name: string; column_name: string; is_nullable: string }[];
    for (const r of rows) {
      const columns = tables[r.table_name] ?? [];
      tables[r.table_name] = columns;
      columns.push(`${r.column_name} ${r.is_nullable === "YES" ? "null" : "not null"}`);
    }
  } else {
    const names = (await db.query(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> 'migrations'`)) as { name: string }[];
    for (const { name } of names) {
      const cols = (await db.query(`PRAGMA table_info(${name})`)) as { name: string; notnull: number; pk: number }[];
      tables[name] = cols.map((c) => `${c.name} ${c.notnull || c.pk ? "not null" : "null"}`);
    }
  }
  for (const cols of Object.values(tables)) cols.sort();
  const migrations = ((await db.query(`SELECT name FROM migrations ORDER BY name`)) as { name: string }[]).map((r) => r.name);
  return { tables, migrations };
}

test("both migration sets create the same tables, columns and nullability under the same names", { skip }, async () => {
  const { sqlite, postgres } = await both();
  const [a, b] = [await shape(sqlite), await shape(postgres)];
  assert.deepEqual(b.tables, a.tables);
  assert.deepEqual(b.migrations, a.migrations);
});

test("entities round-trip dates, large byte counts and measurements on both; boolean filters work", { skip }, async () => {
  const { sqlite, postgres } = await both();
  for (const db of [sqlite, postgres]) {
    const at = new Date("2024-02-29T23:59:58.123Z");
    const group = { id: crypto.randomUUID(), groupName: `g_${crypto.randomUUID()}`, groupPermission: "write" as const, parentGroupId: null, createdAt: at };
    await db.transaction((tx) => tx.insert(Group, group));
    const model = {
      id: crypto.randomUUID(),
      modelName: `m${crypto.randomUUID()}`,
      totalTokensProcessed: 12,
      tokensPerSecond: 42.123456789,
      timeToFirstTokenMs: null,
      sizeBytes: 7_000_000_000,
      digest: "sha256:x",
      family: null,
      parameterSize: null,
      quantization: null,
      pulledAt: at,
      benchmarkedAt: null,
    };
    await db.transaction((tx) => tx.insert(ModelRecord, model));
    const readGroup = await db.manager.findOneByOrFail(Group, { id: group.id });
    assert.equal(readGroup.createdAt.toISOString(), at.toISOString(), db.options.type);
    const readModel = await db.manager.findOneByOrFail(ModelRecord, { id: model.id });
    assert.equal(readModel.sizeBytes, 7_000_000_000, db.options.type);
    assert.equal(readModel.tokensPerSecond, 42.123456789, db.options.type);
    assert.equal(await db.manager.countBy(Group, { id: group.id }), 1);
    const job = await db.manager.findOneBy(IngestJob, { discoveryComplete: true });
    assert.equal(job, null);
  }
});
