import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, it } from "node:test";
import { AuditEvent } from "../../server/data/entities/audit-event.entity";
import { openDatabase } from "../../server/data/data-source";
import { tempDir } from "../fixtures/sluice-server";

const CLI = path.resolve(__dirname, "..", "..", "server", "backup", "backup-cli.js");

function runCli(command: "backup" | "restore", dir: string, dataDir: string) {
  return spawnSync(process.execPath, [CLI, command, dir], { env: { PATH: process.env.PATH ?? "", DATA_DIR: dataDir, SLUICE_SECRETS: "file" }, encoding: "utf8" });
}

async function eventsIn(dataDir: string): Promise<AuditEvent[]> {
  const db = await openDatabase(dataDir);
  try {
    return await db.manager.find(AuditEvent, { order: { at: "ASC" } });
  } finally {
    await db.destroy();
  }
}

describe("the audit trail of the backup tools", () => {
  it("records a backup in the instance's trail and a restore in the restored one, naming the OS user", async () => {
    const dataDir = tempDir("sluice-audit-data-");
    await (await openDatabase(dataDir)).destroy();
    const backupDir = path.join(tempDir("sluice-audit-backup-"), "b");
    const made = runCli("backup", backupDir, dataDir);
    assert.equal(made.status, 0, made.stderr);
    const [backup] = await eventsIn(dataDir);
    assert.equal(backup.action, "backup.made");
    assert.equal(backup.actorId, null);
    assert.ok(backup.detail?.startsWith(`to ${backupDir} (by `), backup.detail ?? "");
    assert.ok(backup.detail?.endsWith(" on this machine)"), backup.detail ?? "");

    const fresh = path.join(tempDir("sluice-audit-restore-"), "data");
    const restored = runCli("restore", backupDir, fresh);
    assert.equal(restored.status, 0, restored.stderr);
    const events = (await eventsIn(fresh)).map((e) => e.action);
    assert.deepEqual(events, ["backup.restored"], "the backup was taken before its own event was written");
  });
});
