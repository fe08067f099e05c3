/**
 * What a folder source may read on this machine, as configured
 * (docs/decisions/0470-folder-paths-checked-as-written.md): the roots (FOLDER_SOURCE_ROOTS), Sluice's own data folder (DATA_DIR, never read) and whether dot-entries
 * are read (FOLDER_SOURCE_DOTFILES). Plain data, so a job's own thread gets it as it is.
 */
export interface FolderRules {
  /** Absolute, normalised; empty: the folder kind is off. */
  roots: string[];
  /** DATA_DIR: never a source folder, never walked into. */
  dataDir: string;
  /** "skip": names starting with "." are neither walked nor indexed, nor a source folder's path. */
  dotfiles: "skip" | "index";
}

export const FOLDER_KIND_OFF =
  "Folder sources are off on this machine: the administrator lists the folders that sources may read in FOLDER_SOURCE_ROOTS";

/** A requested folder that may not be used; the message (starting "path ") says what to fix. */
export class FolderPathError extends Error {}

/** A name the dot rule is about: `.git`, `.ssh`, `.env`; never "." or ".." (those are refused as segments). */
export function isDotName(name: string): boolean {
  return name.startsWith(".") && name !== "." && name !== "..";
}

/**
 * The one answer to every folder that may not be used once its path is well formed: outside the
 * roots, missing, a file, unreadable, reached through a link leading out, inside DATA_DIR or a
 * dot-folder. The same words for all of them, so an answer never tells what exists on the machine.
 */
export function folderRefusal(rules: Pick<FolderRules, "dotfiles">): string {
  const dot = rules.dotfiles === "skip" ? " or a dot-folder (.git, .ssh, ...)" : "";
  return `is not a folder this server can read: it must be an existing folder inside FOLDER_SOURCE_ROOTS, not reached through a link leading out of them, and not inside Sluice's own data folder${dot}`;
}
