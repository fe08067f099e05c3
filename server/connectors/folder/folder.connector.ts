import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import type { Readable } from "node:stream";
import { ConnectorEntryError, ConnectorUnreachableError, type Connector, type RemoteEntry } from "../connector";
import { FOLDER_KIND_OFF, FolderPathError, checkSourceFolder, describeFsError, isInside } from "./folder-roots";

/** Where the platform has it, opening refuses a link as the last path component. */
const NO_FOLLOW = fs.constants.O_NOFOLLOW ?? 0;

const LINK_OUT = "is a link leading out of the source folder; links out of a folder source are not followed";

/**
 * A folder on this machine (or a share mounted on it) as a source. Paths are "/"-separated and
 * relative to the source folder. Links are never followed: a link whose target lies inside the
 * source folder is left out (its target is read under its own path), one leading out is listed
 * as refused. Every directory and file is re-checked against the source folder's real path
 * when it is opened, so a folder swapped for a link after the listing is refused too.
 */
export class FolderConnector implements Connector {
  private base: string | null = null;

  constructor(
    private readonly folder: string,
    private readonly roots: string[],
  ) {}

  /** Re-checks the folder against FOLDER_SOURCE_ROOTS as they are now. */
  async test(): Promise<void> {
    if (this.roots.length === 0) throw new ConnectorUnreachableError(FOLDER_KIND_OFF);
    try {
      this.base = await checkSourceFolder(this.folder, this.roots);
    } catch (error) {
      if (error instanceof FolderPathError) throw new ConnectorUnreachableError(`The folder source can no longer be read: ${error.message}`);
      throw error;
    }
  }

  async list(relPath: string): Promise<RemoteEntry[]> {
    const dir = await this.open(relPath);
    let dirents: fs.Dirent[];
    try {
      dirents = await fsp.readdir(dir, { withFileTypes: true });
    } catch (error) {
      throw new ConnectorEntryError(relPath, `Folder ${describeFsError(error)}: ${relPath}`);
    }
    const entries: RemoteEntry[] = [];
    for (const dirent of dirents) {
      const entry = await this.entry(dir, relPath ? `${relPath}/${dirent.name}` : dirent.name, dirent);
      if (entry) entries.push(entry);
    }
    return entries;
  }

  async stat(relPath: string): Promise<RemoteEntry> {
    const abs = await this.open(relPath);
    return toEntry(relPath, await this.lstat(relPath, abs));
  }

  async read(relPath: string): Promise<Readable> {
    const abs = await this.open(relPath);
    try {
      const handle = await fsp.open(abs, fs.constants.O_RDONLY | NO_FOLLOW);
      return handle.createReadStream();
    } catch (error) {
      throw new ConnectorEntryError(relPath, `File ${describeFsError(error)}: ${relPath}`);
    }
  }

  async close(): Promise<void> {}

  /** The absolute path of an entry, refused unless its real path is that very path under the source folder. */
  private async open(relPath: string): Promise<string> {
    if (this.base === null) await this.test();
    const parts = relPath === "" ? [] : relPath.split("/");
    if (parts.some((p) => p === "" || p === "." || p === "..")) throw new ConnectorEntryError(relPath, "Path segments may not be empty, '.' or '..'");
    const abs = path.join(this.base!, ...parts);
    let real: string;
    try {
      real = await fsp.realpath(abs);
    } catch (error) {
      throw new ConnectorEntryError(relPath, `${relPath || "The source folder"} ${describeFsError(error)}`);
    }
    if (real !== abs) throw new ConnectorEntryError(relPath, `${relPath} ${LINK_OUT}`);
    return abs;
  }

  /** One listed child: a file, a folder, a refused link, or null for what is left out. */
  private async entry(dir: string, relPath: string, dirent: fs.Dirent): Promise<RemoteEntry | null> {
    const abs = path.join(dir, dirent.name);
    if (dirent.isSymbolicLink()) {
      let target: string;
      try {
        target = await fsp.realpath(abs);
      } catch {
        return null; // a dangling link: nothing to read
      }
      // A reparse point that redirects nowhere (a Windows placeholder file) is read as what it is.
      if (target !== abs) {
        if (isInside(target, this.base!)) return null;
        return { path: relPath, name: dirent.name, isDirectory: false, size: 0, modifiedAt: new Date(0), refused: `${relPath} ${LINK_OUT}` };
      }
    } else if (!dirent.isFile() && !dirent.isDirectory()) {
      return null; // sockets, pipes, devices: not documents, and reading a pipe would wait forever
    }
    let stats: fs.Stats;
    try {
      stats = await fsp.stat(abs);
    } catch {
      return null; // gone since the listing
    }
    if (!stats.isFile() && !stats.isDirectory()) return null;
    return toEntry(relPath, stats);
  }

  private async lstat(relPath: string, abs: string): Promise<fs.Stats> {
    try {
      return await fsp.lstat(abs);
    } catch (error) {
      throw new ConnectorEntryError(relPath, `${relPath} ${describeFsError(error)}`);
    }
  }
}

function toEntry(relPath: string, stats: fs.Stats): RemoteEntry {
  const name = relPath.split("/").pop() ?? "";
  return {
    path: relPath,
    name,
    isDirectory: stats.isDirectory(),
    size: stats.isDirectory() ? 0 : stats.size,
    modifiedAt: stats.mtime,
  };
}
