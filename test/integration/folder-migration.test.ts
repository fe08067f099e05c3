import assert from "node:assert/strict";
import crypto from "node:crypto";
import path from "node:path";
import { test } from "node:test";
import { DataSource } from "typeorm";
import { MIGRATIONS, openDatabase } from "../../server/data/data-source";
import { tempDir } from "../fixtures/sluice-server";

// The folder-sources migration rebuilds data_sources on SQLite to drop the kind CHECK: the rows
// that reference it (pipelines, jobs, the kinds' details) must survive, and the foreign keys must still hold.
test("upgrading an existing SQLite database keeps every source and what references it; the kind CHECK is gone", async () => {
  const dir = tempDir("sluice-upgrade-");
  const old = new DataSource({
    type: "better-sqlite3",
    database: path.join(dir, "sluice.db"),
    migrations: MIGRATIONS.filter((m) => m.name !== "FolderSources1763800500000"),
    prepareDatabase: (raw: { pragma(sql: string): unknown }) => void raw.pragma("foreign_keys = ON"),
  });
  await old.initialize();
  await old.runMigrations({ transaction: "each" });
  const [user, group, collection, source, pipeline] = Array.from({ length: 5 }, () => crypto.randomUUID());
  const now = new Date().toISOString();
  await old.query(`INSERT INTO users (id, email, created_at, updated_at) VALUES (?, 'a@example.com', ?, ?)`, [user, now, now]);
  await old.query(`INSERT INTO user_groups (id, group_name, group_permission, created_at) VALUES (?, 'team', 'write', ?)`, [group, now]);
  await old.query(`INSERT INTO collections (id, name, owner_group_id, created_at) VALUES (?, 'docs', ?, ?)`, [collection, group, now]);
  await old.query(`INSERT INTO data_sources (id, name, kind, owner_group_id, auto_collection_id, created_at) VALUES (?, 'Share', 'smb', ?, ?, ?)`, [source, group, collection, now]);
  await old.query(`INSERT INTO smb_sources (data_source_id, remote_system_username, remote_system_name, local_system_name, port) VALUES (?, 'u', 'host', '', 445)`, [source]);
  await old.query(`INSERT INTO drive_sources (data_source_id, owner_user_id) VALUES (?, ?)`, [source, user]);
  await old.query(`INSERT INTO pipelines (id, name, description, data_source_id, collection_id, status, created_at) VALUES (?, 'p', '', ?, ?, 'active', ?)`, [pipeline, source, collection, now]);
  await assert.rejects(old.query(`INSERT INTO data_sources (id, name, kind, owner_group_id, created_at) VALUES ('x', 'n', 'folder', ?, ?)`, [group, now]), /CHECK/);
  await old.destroy();

  const db = await openDatabase(dir);
  try {
    const count = async (table: string) => ((await db.query(`SELECT count(*) AS n FROM ${table}`)) as { n: number }[])[0].n;
    assert.deepEqual([await count("data_sources"), await count("smb_sources"), await count("drive_sources"), await count("pipelines")], [1, 1, 1, 1]);
    await db.query(`INSERT INTO data_sources (id, name, kind, owner_group_id, created_at) VALUES ('x', 'n', 'any-kind', ?, ?)`, [group, now]);
    await db.query(`INSERT INTO folder_sources (data_source_id, path) VALUES ('x', '/srv')`);
    await assert.rejects(db.query(`INSERT INTO pipelines (id, name, description, data_source_id, collection_id, status, created_at) VALUES ('y', 'p', '', 'missing', ?, 'active', ?)`, [collection, now]), /FOREIGN KEY/);
    // Deleting a source still cascades into what references it.
    await db.query(`DELETE FROM data_sources`);
    assert.deepEqual([await count("smb_sources"), await count("drive_sources"), await count("pipelines"), await count("folder_sources")], [0, 0, 0, 0]);
  } finally {
    await db.destroy();
  }
});
