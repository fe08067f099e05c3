import fs from "node:fs";
import fsp, { type FileHandle } from "node:fs/promises";
import { describeFsError } from "./folder-roots";

/**
 * Opening a walked file of a folder source so that what is read is the file the walk saw
 * (docs/decisions/0471-folder-files-opened-as-walked.md). The open follows no link as its last
 * component (O_NOFOLLOW) and never waits (O_NONBLOCK: a FIFO or a device swapped in cannot hang
 * the reader; O_NOCTTY: a terminal is not taken as the process's). The opened file must then be a regular file whose device and
 * inode are the walk's, so a file or a parent folder swapped between the walk and the open is
 * refused, not read. On Linux the path the kernel opened (/proc/self/fd) must be the path asked
 * for, which also catches a parent swapped for a link and back around the checks.
 */

const { O_RDONLY, O_NOFOLLOW = 0, O_NONBLOCK = 0, O_NOCTTY = 0 } = fs.constants;
const OPEN_FLAGS = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;

/** A file as the walk saw it: device and inode ("dev:ino", exact in bigints). */
export type FileIdentity = string;

export function identityOf(stats: fs.BigIntStats): FileIdentity {
  return `${stats.dev}:${stats.ino}`;
}

/** The file at the path is not the one to read; the message completes "<path> ...". */
export class FileRefused extends Error {}

export const NOT_REGULAR = "is not a regular file (a pipe, a device or a socket) and is not read";
export const REPLACED = "was replaced between the listing and the read and is not read (the next run reads what is there then)";
export const IS_LINK = "is a link, and links in a folder source are not followed";

const FD_PATHS = "/proc/self/fd";

/** Opens `absolute` for reading if it is still the regular file `expected` names; else throws FileRefused. */
export async function openWalkedFile(absolute: string, expected: FileIdentity): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await fsp.open(absolute, OPEN_FLAGS);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // O_NOFOLLOW on a link: ELOOP on Linux and macOS, EMLINK on FreeBSD.
    if (code === "ELOOP" || code === "EMLINK") throw new FileRefused(IS_LINK);
    throw new FileRefused(describeFsError(error));
  }
  try {
    const stats = await handle.stat({ bigint: true });
    if (!stats.isFile()) throw new FileRefused(NOT_REGULAR);
    if (identityOf(stats) !== expected) throw new FileRefused(REPLACED);
    const opened = await openedPath(handle);
    if (opened !== null && opened !== absolute) throw new FileRefused(REPLACED);
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** The path the kernel holds open for the handle (Linux); null where the platform does not say (no /proc). */
async function openedPath(handle: FileHandle): Promise<string | null> {
  if (process.platform !== "linux") return null;
  try {
    return await fsp.readlink(`${FD_PATHS}/${handle.fd}`);
  } catch {
    return null;
  }
}
