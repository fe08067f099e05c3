import * as fs from "node:fs";

/**
 * The mark a collection file's writer leaves beside it (`<id>.db-clean`) when a job's writes all
 * committed and its WAL was folded back in: the file's identity at that moment (inode, size,
 * modification and change times to the nanosecond), with an empty or absent WAL. An open whose
 * file still has that identity skips quick_check, which reads every page; anything that changed
 * the file since (a write, a truncation, bytes overwritten, a copy put in its place: each moves
 * the size, the mtime or the ctime, and the ctime cannot be set back) or a WAL with frames in it
 * makes the identity differ, and the check runs as before
 * (docs/decisions/0502-no-quick-check-on-a-cleanly-written-file.md).
 */

export function cleanMarkPath(file: string): string {
  return `${file}-clean`;
}

/** The file's identity as the mark holds it; null without the file, or with frames in its WAL (not yet folded in). */
function identityOf(file: string): string | null {
  const db = fs.statSync(file, { bigint: true, throwIfNoEntry: false });
  if (!db) return null;
  const wal = fs.statSync(`${file}-wal`, { bigint: true, throwIfNoEntry: false });
  if (wal && wal.size > 0n) return null;
  return `sluice-clean 1 ino=${db.ino} size=${db.size} mtime=${db.mtimeNs} ctime=${db.ctimeNs} wal=empty`;
}

/** Writes the mark for the file as it is now (atomically: a half-written mark never matches); false when its WAL still has frames. */
export function writeCleanMark(file: string): boolean {
  const identity = identityOf(file);
  if (identity === null) return false;
  const mark = cleanMarkPath(file);
  const partial = `${mark}.${process.pid}.tmp`;
  fs.writeFileSync(partial, identity);
  fs.renameSync(partial, mark);
  return true;
}

/** Whether the file is as its mark says it was left (no mark, no match). */
export function matchesCleanMark(file: string): boolean {
  let recorded: string;
  try {
    recorded = fs.readFileSync(cleanMarkPath(file), "utf8");
  } catch {
    return false;
  }
  return recorded === identityOf(file);
}

export function removeCleanMark(file: string): void {
  fs.rmSync(cleanMarkPath(file), { force: true });
}
