import fs from "node:fs";
import path from "node:path";
import { isMainThread } from "node:worker_threads";

/**
 * What Sluice keeps in DATA_DIR, by name: the SQLite database and its journals, the collection
 * indexes, the secrets fallback with its key and lock, the model catalog it refreshed, and the
 * desktop shell's settings and logs. Only these are tightened, never anything else a DATA_DIR
 * pointed at a shared folder may hold.
 */
const OWN_ENTRIES = [
  "sluice.db",
  "sluice.db-wal",
  "sluice.db-shm",
  "sluice.db-journal",
  "indexes",
  "secrets.enc.json",
  "secrets.enc.json.lock",
  "secret.key",
  "model-library.json",
  "settings.json",
  "logs",
];

/** Group and other permission bits: none of them may be set on anything of ours. */
const SHARED_BITS = 0o077;

/** What makeDataDirPrivate changed: entries relative to DATA_DIR ("." for itself). */
export interface DataDirPrivacy {
  tightened: string[];
  /** Entries it could not change (another user's file, say), with the reason. */
  failed: string[];
}

/**
 * Makes DATA_DIR private to the user running Sluice (docs/decisions/0025-private-data-directory.md): creates
 * it 0700, sets this process's umask to 077 so every file and folder created from now on
 * (SQLite's database, -wal and -shm, index files, the secrets file, temp files, logs) is
 * 0600/0700 whoever creates it, and takes group and other access away from what an earlier
 * run left looser. Windows keeps the per-user app-data folder private by its ACL; POSIX modes
 * do not apply there.
 */
export function makeDataDirPrivate(dataDir: string): DataDirPrivacy {
  const result: DataDirPrivacy = { tightened: [], failed: [] };
  if (process.platform === "win32") return result;
  // umask is per process; worker threads cannot set it and inherit the main thread's.
  if (isMainThread) process.umask(0o077);
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  tightenEntry(dataDir, ".", false, result);
  for (const name of OWN_ENTRIES) tightenEntry(dataDir, name, true, result);
  return result;
}

function tightenEntry(dataDir: string, relative: string, recurse: boolean, result: DataDirPrivacy): void {
  const full = path.join(dataDir, relative);
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(full);
  } catch {
    return;
  }
  // A link is left alone: chmod would follow it to whatever it points at.
  if (stat.isSymbolicLink()) return;
  if ((stat.mode & SHARED_BITS) !== 0) {
    try {
      fs.chmodSync(full, stat.mode & 0o7777 & ~SHARED_BITS);
      result.tightened.push(relative);
    } catch (error) {
      result.failed.push(`${relative} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
    }
  }
  if (recurse && stat.isDirectory()) {
    for (const name of fs.readdirSync(full)) tightenEntry(dataDir, path.join(relative, name), true, result);
  }
}
