import fs from "node:fs/promises";
import path from "node:path";

/**
 * The safety rule of folder sources, in one place. The API is reachable from the LAN, so a
 * folder source may only read inside the folders the machine's owner lists in
 * FOLDER_SOURCE_ROOTS. Decisions are taken on real paths (fs.realpath resolves symlinks and
 * Windows junctions), so no link can lead a source out of a root.
 */

export const FOLDER_KIND_OFF =
  "Folder sources are off on this machine: the administrator lists the folders that sources may read in FOLDER_SOURCE_ROOTS";

/** A requested folder that may not be used; the message says what to fix. */
export class FolderPathError extends Error {}

/** child is parent or lies under it (both real, absolute paths; case-insensitive where the platform's paths are). */
export function isInside(child: string, parent: string): boolean {
  const rel = path.relative(parent, child);
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

/** The roots as real paths; a root that does not exist (an unmounted share) allows nothing. */
async function realRoots(roots: string[]): Promise<string[]> {
  const real: string[] = [];
  for (const root of roots) {
    try {
      real.push(await fs.realpath(root));
    } catch {
      // Nothing can be inside a root that is not there.
    }
  }
  return real;
}

/** The normalised absolute form a folder source is stored under; refuses relative paths and ".." segments. */
export function normaliseFolderPath(requested: string): string {
  if (requested.includes("\0")) throw new FolderPathError("path may not contain NUL characters");
  if (!path.isAbsolute(requested)) throw new FolderPathError(`path must be an absolute folder path (starting with ${path.sep === "/" ? '"/"' : 'a drive letter like "C:\\"'})`);
  if (requested.split(/[\\/]+/).includes("..")) throw new FolderPathError('path may not contain ".." segments: give the folder\'s full path');
  return path.resolve(requested);
}

/**
 * Checks a folder a source should read: absolute, no "..", an existing directory whose real
 * path is inside the real path of one of the roots. Returns its real path.
 */
export async function checkSourceFolder(requested: string, roots: string[]): Promise<string> {
  const folder = normaliseFolderPath(requested);
  let real: string;
  try {
    real = await fs.realpath(folder);
  } catch (error) {
    throw new FolderPathError(`path ${describeFsError(error)}: ${folder}`);
  }
  if (!(await fs.stat(real)).isDirectory()) throw new FolderPathError(`path is a file, not a folder: ${folder}`);
  const allowed = await realRoots(roots);
  if (!allowed.some((root) => isInside(real, root))) {
    throw new FolderPathError(
      `path is outside the folders this machine allows (FOLDER_SOURCE_ROOTS: ${roots.join(path.delimiter)}); links leading out of them do not count as inside: ${folder}`,
    );
  }
  return real;
}

export function describeFsError(error: unknown): string {
  switch ((error as NodeJS.ErrnoException)?.code) {
    case "ENOENT":
    case "ENOTDIR":
      return "does not exist";
    case "EACCES":
    case "EPERM":
      return "cannot be opened (permission denied)";
    case "ELOOP":
      return "is a loop of links";
    default:
      return `cannot be read (${(error as NodeJS.ErrnoException)?.code ?? "error"})`;
  }
}
