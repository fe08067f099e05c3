import os from "node:os";
import { openDatabase } from "../data/data-source";
import { AuditLog, type AuditAction } from "./audit";

/**
 * An event of a command-line tool (backup, restore) run on the server's machine: no account
 * and no client address, so the event names the operating-system user who ran it. Written into
 * the desktop database under `dataDir` (the backup tools refuse a team server).
 */
export async function recordToolEvent(dataDir: string, keepDays: number, action: AuditAction, detail: string): Promise<void> {
  const db = await openDatabase(dataDir);
  try {
    await new AuditLog(db, keepDays).record({ action, actorId: null, actorEmail: null, address: null, detail: `${detail} (by ${os.userInfo().username} on this machine)` });
  } finally {
    await db.destroy();
  }
}
