import fs from "node:fs";
import path from "node:path";

export const LOCK_FILE_NAME = "sluice.lock";

/** Who holds DATA_DIR: written into the lock file, shown to a second server that finds it. */
interface Holder {
  pid: number;
  /** The address it serves, once it listens; null while it starts. */
  url: string | null;
  startedAt: string;
  /** Linux: the process's start time in clock ticks since boot (/proc/<pid>/stat), so a reused pid is not mistaken for the holder. */
  procStart: string | null;
}

/** A second server on the same DATA_DIR: it would run jobs beside the first, breaking one-job-at-a-time. */
export class InstanceLockedError extends Error {
  constructor(dataDir: string, holder: Holder) {
    super(
      `Another Sluice server is already using DATA_DIR ${dataDir} (pid ${holder.pid}, ${holder.url ?? "still starting"}); stop it first or set DATA_DIR`,
    );
    this.name = "InstanceLockedError";
  }
}

export interface InstanceLock {
  /** Records the address once the server listens, for the message a second server shows. */
  setUrl(url: string): void;
  /** Removes the lock file if it is still this process's. */
  release(): void;
}

/**
 * Takes DATA_DIR for this process: a lock file made with link(2), which fails if the file
 * exists and makes it appear with its whole content at once. A lock whose process is gone (a
 * crash, a power cut) is stale and taken over; Node has no portable flock, and a pid check
 * (with the process start time where /proc has it) needs nothing to be cleaned up by hand.
 */
export function acquireInstanceLock(dataDir: string): InstanceLock {
  // Private from the start: the lock is taken before storage makes DATA_DIR private (0700/0600).
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const lockPath = path.join(dataDir, LOCK_FILE_NAME);
  const mine: Holder = { pid: process.pid, url: null, startedAt: new Date().toISOString(), procStart: procStart(process.pid) };
  for (let attempt = 0; attempt < 5; attempt++) {
    if (createExclusively(lockPath, mine)) return ownLock(lockPath, mine);
    const holder = readHolder(lockPath);
    if (holder === undefined) continue; // gone meanwhile: try again
    if (holder && isAlive(holder)) throw new InstanceLockedError(dataDir, holder);
    takeOverStale(lockPath, holder);
  }
  throw new Error(`Could not take the lock file ${lockPath}: it keeps changing (another server starting at the same moment?)`);
}

function ownLock(lockPath: string, mine: Holder): InstanceLock {
  return {
    setUrl(url) {
      mine.url = url;
      const temp = `${lockPath}.${process.pid}.tmp`;
      fs.writeFileSync(temp, JSON.stringify(mine), { mode: 0o600 });
      fs.renameSync(temp, lockPath);
    },
    release() {
      if (readHolder(lockPath)?.pid === mine.pid) fs.rmSync(lockPath, { force: true });
    },
  };
}

function createExclusively(lockPath: string, holder: Holder): boolean {
  const temp = `${lockPath}.${process.pid}.tmp`;
  fs.writeFileSync(temp, JSON.stringify(holder), { mode: 0o600 });
  try {
    fs.linkSync(temp, lockPath);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    return false;
  } finally {
    fs.rmSync(temp, { force: true });
  }
}

/** The holder; null for a file that is not a lock we wrote (stale by definition); undefined when there is no file. */
function readHolder(lockPath: string): Holder | null | undefined {
  let text: string;
  try {
    text = fs.readFileSync(lockPath, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  try {
    const parsed = JSON.parse(text) as Holder;
    return Number.isInteger(parsed.pid) ? parsed : null;
  } catch {
    return null;
  }
}

/**
 * Moves the stale lock aside, then checks that what moved is the stale one: another server
 * taking over at the same moment may have put its own lock there first, which goes back.
 */
function takeOverStale(lockPath: string, stale: Holder | null): void {
  const aside = `${lockPath}.${process.pid}.stale`;
  try {
    fs.renameSync(lockPath, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw error;
  }
  const moved = readHolder(aside);
  if (moved && stale && (moved.pid !== stale.pid || moved.startedAt !== stale.startedAt)) {
    // Not the stale lock: a live one, put back unless yet another appeared meanwhile.
    try {
      fs.linkSync(aside, lockPath);
    } catch {
      // another lock is in place; ours to drop
    }
  }
  fs.rmSync(aside, { force: true });
}

function isAlive(holder: Holder): boolean {
  // This very process cannot be the holder it is looking at (a pid reused after a restart, e.g. in a container).
  if (holder.pid === process.pid) return false;
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  const started = procStart(holder.pid);
  return !(holder.procStart && started && started !== holder.procStart);
}

/** Field 22 of /proc/<pid>/stat (start time); null off Linux. The command name (field 2) may hold spaces, so fields are counted after its ")". */
function procStart(pid: number): string | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? null;
  } catch {
    return null;
  }
}
