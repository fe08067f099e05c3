import fs from "node:fs/promises";
import path from "node:path";
import { FolderPathError, type FolderRules, folderRefusal, isDotName } from "./folder-rules";

/**
 * Whether a folder may be a source's, in one place
 * (docs/decisions/0470-folder-paths-checked-as-written.md). The API is reachable from the LAN,
 * so a folder source may only read inside the folders the machine's owner lists in
 * FOLDER_SOURCE_ROOTS. The path as written is checked first, before anything on disk is looked
 * at, so a path outside the roots learns nothing about the machine; then the real path
 * (fs.realpath resolves symlinks and Windows junctions) is checked again, so no link can lead a
 * source out of a root.
 */

/** child is parent or lies under it (both absolute, normalised paths; case-insensitive where the platform's paths are). */
export function isInside(child: string, parent: string): boolean {
  const rel = path.relative(parent, child);
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

/**
 * The absolute, normalised form a folder source is stored and checked under. Only the text is
 * looked at: NUL characters and relative paths are refused (they say nothing about the disk);
 * ".." segments are resolved lexically, so "/root/../etc" is "/etc" and outside the roots.
 */
export function normaliseFolderPath(requested: string): string {
  if (requested.includes("\0")) throw new FolderPathError("path may not contain NUL characters");
  if (!path.isAbsolute(requested)) throw new FolderPathError(`path must be an absolute folder path (starting with ${path.sep === "/" ? '"/"' : 'a drive letter like "C:\\"'})`);
  return path.resolve(requested);
}

/** Inside one of the roots (below it, no dot-entry, unless dot-entries are read) and not inside the data folder. */
function allowed(folder: string, roots: string[], dataDir: string, dotfiles: FolderRules["dotfiles"]): boolean {
  if (isInside(folder, dataDir)) return false;
  return roots.some((root) => isInside(folder, root) && (dotfiles === "index" || !path.relative(root, folder).split(path.sep).some(isDotName)));
}

/** The real path of a folder, or the path itself where it is not there (nothing real can be inside it then). */
async function realOrSelf(folder: string): Promise<string> {
  try {
    return await fs.realpath(folder);
  } catch {
    return folder;
  }
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

/** dev:ino of a folder, following links; null where it cannot be looked at. */
export async function folderIdentity(folder: string): Promise<string | null> {
  try {
    const stats = await fs.stat(folder, { bigint: true });
    return `${stats.dev}:${stats.ino}`;
  } catch {
    return null;
  }
}

/** Whether `real` or one of its parents is the folder of that identity (catches another spelling of DATA_DIR: case, a bind mount). */
async function underIdentity(real: string, identity: string | null): Promise<boolean> {
  if (identity === null) return false;
  for (let at = real; ; at = path.dirname(at)) {
    if ((await folderIdentity(at)) === identity) return true;
    if (path.dirname(at) === at) return false;
  }
}

/**
 * Checks a folder a source should read and returns its real path. Every refusal of a well-formed
 * path throws the same FolderPathError (folderRefusal): outside the roots as written, then
 * missing, not a folder, unreadable, or outside them (or inside DATA_DIR, a dot-folder) once real.
 */
export async function checkSourceFolder(requested: string, rules: FolderRules): Promise<string> {
  const folder = normaliseFolderPath(requested);
  const refused = new FolderPathError(`path ${folderRefusal(rules)}`);
  if (!allowed(folder, rules.roots, path.resolve(rules.dataDir), rules.dotfiles)) throw refused;
  let real: string;
  try {
    real = await fs.realpath(folder);
    if (!(await fs.stat(real)).isDirectory()) throw refused;
  } catch {
    throw refused;
  }
  if (!allowed(real, await realRoots(rules.roots), await realOrSelf(rules.dataDir), rules.dotfiles)) throw refused;
  if (await underIdentity(real, await folderIdentity(rules.dataDir))) throw refused;
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
