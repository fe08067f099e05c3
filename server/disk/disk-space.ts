import { promises as fsp } from "node:fs";

/** Below this much free space in DATA_DIR the UI warns (docs/user-guide.md: When things go wrong). */
const LOW_DISK_BYTES = 1024 ** 3;
/** ...or below this share of the file system. */
const LOW_DISK_RATIO = 0.05;

export interface DiskSpace {
  freeBytes: number;
  totalBytes: number;
}

/** Free space for this (unprivileged) process on the file system holding `dir`. */
async function diskSpace(dir: string): Promise<DiskSpace> {
  const stats = await fsp.statfs(dir);
  return { freeBytes: stats.bavail * stats.bsize, totalBytes: stats.blocks * stats.bsize };
}

/** "1.4 MB", "2.1 GB": one decimal, decimal units as file managers show them. */
function formatBytes(bytes: number): string {
  const units = ["bytes", "kB", "MB", "GB", "TB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return unit === 0 ? `${bytes} bytes` : `${value.toFixed(1)} ${units[unit]}`;
}

/** True for SQLite's SQLITE_FULL ("database or disk is full") and a file write's ENOSPC, whichever thread or driver wrapped it. */
export function isDiskFull(error: unknown): boolean {
  for (let e = error as { code?: unknown; driverError?: unknown; cause?: unknown; message?: unknown } | undefined, depth = 0; e && depth < 5; depth++) {
    // SLUICE_DISK_FULL: a DiskFullError that crossed from an ingestion job's thread as its code.
    if (e.code === "SQLITE_FULL" || e.code === "ENOSPC" || e.code === "SLUICE_DISK_FULL" || e instanceof DiskFullError) return true;
    if (/database or disk is full|ENOSPC|no space left on device/i.test(String(e.message ?? ""))) return true;
    e = (e.driverError ?? e.cause) as typeof e;
  }
  return false;
}

/** What a job ends with when DATA_DIR has no room: the cause and the free space, the words the user needs. */
class DiskFullError extends Error {
  readonly code = "SLUICE_DISK_FULL";
  constructor(readonly freeBytes: number) {
    super(`Not enough disk space in DATA_DIR: ${formatBytes(freeBytes)} free`);
    this.name = "DiskFullError";
  }
}

/** How often a running job looks at the free space again; statfs costs microseconds, this bounds it anyway. */
const RECHECK_MS = 250;

/**
 * The minimum free space a job needs in DATA_DIR (MIN_FREE_DISK_MB). A job checks it before
 * it writes anything and again as it indexes, so it stops while the database still has room
 * to record why; a write that fills the disk anyway ends the job with the same message.
 */
export class DiskGuard {
  private lastCheck = 0;

  constructor(
    readonly dir: string,
    readonly minFreeBytes: number,
  ) {}

  /** Throws DiskFullError when free space is under the minimum. */
  async assertRoom(): Promise<void> {
    this.lastCheck = Date.now();
    const { freeBytes } = await diskSpace(this.dir);
    if (freeBytes < this.minFreeBytes) throw new DiskFullError(freeBytes);
  }

  /** assertRoom at most every RECHECK_MS, for the per-file path of a job. */
  async assertRoomNow(): Promise<void> {
    if (Date.now() - this.lastCheck >= RECHECK_MS) await this.assertRoom();
  }

  /** The DiskFullError for a write that failed for lack of space, with the space free now. */
  async failure(): Promise<DiskFullError> {
    const { freeBytes } = await diskSpace(this.dir).catch(() => ({ freeBytes: 0 }));
    return new DiskFullError(freeBytes);
  }
}

/** The `disk` part of GET /health: DATA_DIR's free space and whether the UI should warn. */
export async function diskHealth(dir: string): Promise<{ disk: { free_bytes: number; total_bytes: number; low: boolean } } | Record<string, never>> {
  try {
    const { freeBytes, totalBytes } = await diskSpace(dir);
    return { disk: { free_bytes: freeBytes, total_bytes: totalBytes, low: freeBytes < LOW_DISK_BYTES || freeBytes < totalBytes * LOW_DISK_RATIO } };
  } catch {
    // Health must keep answering even when DATA_DIR cannot be examined.
    return {};
  }
}
