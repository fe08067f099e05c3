import { after, test } from "node:test";
import assert from "node:assert/strict";
import os from "node:os";
import type { DataSource } from "typeorm";
import { openDatabase } from "../../server/data/data-source";
import { independentWrite } from "../../server/data/serial-transactions";
import { postgresBinDir, sharedPostgres } from "../fixtures/postgres";
import { latch, within } from "../fixtures/wait-for";

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
  const held = latch();
  const inside = latch();
  const api = db.transaction(async () => {
    inside.open();
    await held.promise;
  });
  await within(inside.promise, "the API transaction to take the writer lock");
  await within(independentWrite(db, (tx) => tx.query("SELECT 1")), "the independent write while the API transaction holds the lock");
  const locked = db.transaction((tx) => tx.query("SELECT 1"));
  // Still waiting after 300 ms: a slower machine can only make this weaker, never fail it.
  assert.equal(await settled(locked, 300), "waiting");
  held.open();
  await api;
  await within(locked, "the locked transaction once the lock is released");
});

test("SQLite: an independent write is an ordinary serialized transaction", async () => {
  const { default: fs } = await import("node:fs");
  const dir = fs.mkdtempSync(`${os.tmpdir()}/sluice-serial-`);
  const lite = await openDatabase(dir);
  try {
    const order: string[] = [];
    const first = lite.transaction(async () => {
      // Time for the second write to cut in were it not serialized: a slower machine only weakens this.
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
