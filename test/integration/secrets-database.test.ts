import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { DataSource } from "typeorm";
import { openDatabase } from "../../server/data/data-source";
import { DatabaseSecretStore } from "../../server/secrets/database-store";
import { FileSecretStore, SecretStoreError } from "../../server/secrets/secrets";

// The team store against a real database file (SQLite here; the PostgreSQL run of the
// integration suite covers it on PostgreSQL, across processes and machines).
describe("DatabaseSecretStore", () => {
  const dirs: string[] = [];
  const databases: DataSource[] = [];
  after(async () => {
    for (const db of databases) if (db.isInitialized) await db.destroy();
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });
  const setUp = async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sluice-db-secrets-"));
    dirs.push(dir);
    const db = await openDatabase(dir);
    databases.push(db);
    const local = await FileSecretStore.open(path.join(dir, "local"));
    return { dir, db, local };
  };
  const rows = (db: DataSource) => db.query("SELECT name, sealed FROM secrets") as Promise<Array<{ name: string; sealed: string }>>;

  it("round-trips secrets and keeps them only sealed in the database", async () => {
    const { db, local } = await setUp();
    const store = await DatabaseSecretStore.open(db, randomBytes(32), local);
    assert.equal(store.kind, "database");
    assert.equal(await store.get("smb-password:a"), null);
    await store.set("smb-password:a", "hunter2-but-longer");
    assert.equal(await store.get("smb-password:a"), "hunter2-but-longer");
    await store.set("smb-password:a", "changed");
    assert.equal(await store.get("smb-password:a"), "changed");
    for (const row of await rows(db)) {
      assert.ok(!row.sealed.includes("changed") && !Buffer.from(row.sealed, "base64").toString("latin1").includes("changed"));
    }
    await store.delete("smb-password:a");
    assert.equal(await store.get("smb-password:a"), null);
    await store.delete("smb-password:a"); // a missing key is not an error
  });

  it("getOrCreate keeps the first value for every process (two connections to one database)", async () => {
    const { dir, db, local } = await setUp();
    const key = randomBytes(32);
    const other = await openDatabase(dir);
    databases.push(other);
    const a = await DatabaseSecretStore.open(db, key, local);
    const b = await DatabaseSecretStore.open(other, key, local);
    const first = await a.getOrCreate("jwt-signing-secret", () => "made-by-a");
    const second = await b.getOrCreate("jwt-signing-secret", () => "made-by-b");
    assert.equal(first, "made-by-a");
    assert.equal(second, "made-by-a");
  });

  it("refuses a key that is not the one the secrets were sealed with", async () => {
    const { db, local } = await setUp();
    await (await DatabaseSecretStore.open(db, randomBytes(32), local)).set("smb-password:b", "pw-b");
    await assert.rejects(DatabaseSecretStore.open(db, randomBytes(32), local), (error: unknown) => {
      assert.ok(error instanceof SecretStoreError);
      assert.match(error.message, /cannot be opened with this SECRETS_KEY/);
      assert.doesNotMatch(error.message, /pw-b/);
      return true;
    });
  });

  it("a sealed value moved to another secret's name does not open", async () => {
    const { db, local } = await setUp();
    const store = await DatabaseSecretStore.open(db, randomBytes(32), local);
    await store.set("smb-password:c", "pw-c");
    const [row] = (await rows(db)).filter((r) => r.name === "smb-password:c");
    await db.query("INSERT INTO secrets (name, sealed, updated_at) VALUES (?, ?, ?)", ["smb-password:d", row.sealed, new Date().toISOString()]);
    await assert.rejects(store.get("smb-password:d"), SecretStoreError);
  });

  it("moves a secret kept in the machine's own store before into the database on first read", async () => {
    const { db, local } = await setUp();
    await local.set("smb-password:old", "from-before-the-upgrade");
    const store = await DatabaseSecretStore.open(db, randomBytes(32), local);
    assert.equal(await store.get("smb-password:old"), "from-before-the-upgrade");
    assert.ok((await rows(db)).some((r) => r.name === "smb-password:old"), "now in the shared database");
    await store.delete("smb-password:old");
    assert.equal(await local.get("smb-password:old"), null, "the old copy does not come back");
    assert.equal(await store.get("smb-password:old"), null);
  });
});
