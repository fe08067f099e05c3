import { after, test } from "node:test";
import assert from "node:assert/strict";
import os from "node:os";
import type { DataSource } from "typeorm";
import { openDatabase } from "../../server/data/data-source";
import { independentWrite } from "../../server/data/serial-transactions";
import { postgresBinDir, sharedPostgres } from "../fixtures/postgres";
import { WAIT_LIMIT_MS } from "../fixtures/wait-for";

// On PostgreSQL every db.transaction takes one writer lock; ingestion's progress writes
// (independentWrite) must neither wait for it nor hold it.
let db: DataSource | null = null;
after(async () => {
  if (db?.isInitialized) await db.destroy();
});

const settled = (p: Promise<unknown>, ms: number) => Promise.race([p.then(() => "done"), new Promise((r) => setTimeout(() => r("waiting"), ms))]);

test("PostgreSQL: an independent write goes through while an API transaction holds the writer lock; a locked one waits", { skip: postgresBinDir() ? false : "PostgreSQL is not installed" }, async () => {
  const cluster = await sharedPostgres();
  db = await openDatabase({ dataDir: os.tmpdir(), databaseUrl: await cluster.createDatabase() });
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let entered!: () => void;
  const inside = new Promise<void>((r) => (entered = r));
  const api = db.transaction(async () => {
    entered();
    await held;
  });
  await inside;
  assert.equal(await settled(independentWrite(db, (tx) => tx.query("SELECT 1")), WAIT_LIMIT_MS), "done");
  const locked = db.transaction((tx) => tx.query("SELECT 1"));
  assert.equal(await settled(locked, 300), "waiting");
  release();
  await api;
  assert.equal(await settled(locked, WAIT_LIMIT_MS), "done");
});

test("SQLite: an independent write is an ordinary serialized transaction", async () => {
  const { default: fs } = await import("node:fs");
  const dir = fs.mkdtempSync(`${os.tmpdir()}/sluice-serial-`);
  const lite = await openDatabase(dir);
  try {
    const order: string[] = [];
    const first = lite.transaction(async () => {
      await new Promise((r) => setTimeout(r, 50));
      order.push("api");
    });
    const second = independentWrite(lite, async () => {
      order.push("progress");
    });
    await Promise.all([first, second]);
    assert.deepEqual(order, ["api", "progress"]);
  } finally {
    await lite.destroy();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
