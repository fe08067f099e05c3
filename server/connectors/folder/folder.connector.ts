import type fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import type { Readable } from "node:stream";
import { ConnectorEntryError, ConnectorUnreachableError, type Connector, type RemoteEntry } from "../connector";
import { FileRefused, type FileIdentity, identityOf, openWalkedFile } from "./folder-open";
import { checkSourceFolder, describeFsError, folderIdentity, isInside } from "./folder-roots";
import { FOLDER_KIND_OFF, FolderPathError, type FolderRules, folderRefusal, isDotName } from "./folder-rules";

const LINK_OUT = "is a link leading out of the source folder; links out of a folder source are not followed";
const DOT_ENTRY = "is a dot-entry, which folder sources do not read here (FOLDER_SOURCE_DOTFILES=skip)";
const IN_DATA_DIR = "is inside Sluice's own data folder, which folder sources never read";

/** Tests only: a step between a file's checks and its open, where a test swaps the file. */
export interface FolderConnectorHooks {
  beforeOpen?(relPath: string): Promise<void>;
}

/**
 * A folder on this machine (or a share mounted on it) as a source. Paths are "/"-separated and
 * relative to the source folder. Links are never followed: a link whose target lies inside the
 * source folder is left out (its target is read under its own path), one leading out is listed
 * as refused, even into another root (docs/decisions/0470-folder-paths-checked-as-written.md).
 * DATA_DIR and, unless FOLDER_SOURCE_DOTFILES=index, dot-entries are neither walked nor
 * indexed. Every directory and file is re-checked against the source folder's real path when it
 * is opened, and a file is read only if it is still the regular file the walk saw (folder-open.ts).
 */
export class FolderConnector implements Connector {
  private base: string | null = null;
  private dataDir: { real: string; identity: string | null } | null = null;
  /** What the walk saw at each listed path: a read opens only that very file. */
  private readonly walked = new Map<string, FileIdentity>();

  constructor(
    private readonly folder: string,
    private readonly rules: FolderRules,
    private readonly hooks: FolderConnectorHooks = {},
  ) {}

  /** Re-checks the folder against the rules as they are now. */
  async test(): Promise<void> {
    if (this.rules.roots.length === 0) throw new ConnectorUnreachableError(FOLDER_KIND_OFF);
    try {
      this.base = await checkSourceFolder(this.folder, this.rules);
    } catch (error) {
      if (error instanceof FolderPathError) throw new ConnectorUnreachableError(`The source's folder ${folderRefusal(this.rules)}`);
      throw error;
    }
    this.dataDir = { real: await fsp.realpath(this.rules.dataDir).catch(() => path.resolve(this.rules.dataDir)), identity: await folderIdentity(this.rules.dataDir) };
  }

  async list(relPath: string): Promise<RemoteEntry[]> {
    const dir = await this.resolve(relPath);
    // As the parent's listing saw it, so a folder swapped since then is caught too.
    const before = this.walked.get(relPath) ?? (await this.identity(relPath, dir));
    let dirents: fs.Dirent[];
    try {
      dirents = await fsp.readdir(dir, { withFileTypes: true });
    } catch (error) {
      throw new ConnectorEntryError(relPath, `Folder ${describeFsError(error)}: ${relPath}`);
    }
    // A folder swapped while it was read: its names may be another folder's, so none are used.
    await this.resolve(relPath);
    if ((await this.identity(relPath, dir)) !== before) throw new ConnectorEntryError(relPath, `${relPath || "The source folder"} was replaced while it was listed`);
    const entries: RemoteEntry[] = [];
    for (const dirent of dirents) {
      const entry = await this.entry(dir, relPath ? `${relPath}/${dirent.name}` : dirent.name, dirent.name);
      if (entry) entries.push(entry);
    }
    return entries;
  }

  async stat(relPath: string): Promise<RemoteEntry> {
    const abs = await this.resolve(relPath);
    try {
      return toEntry(relPath, await fsp.lstat(abs, { bigint: true }));
    } catch (error) {
      throw new ConnectorEntryError(relPath, `${relPath} ${describeFsError(error)}`);
    }
  }

  async read(relPath: string): Promise<Readable> {
    const abs = await this.resolve(relPath);
    // A path the walk never listed (a direct read) is held to what it is now.
    const expected = this.walked.get(relPath) ?? (await this.identity(relPath, abs));
    await this.hooks.beforeOpen?.(relPath);
    try {
      const handle = await openWalkedFile(abs, expected);
      return handle.createReadStream();
    } catch (error) {
      if (error instanceof FileRefused) throw new ConnectorEntryError(relPath, `${relPath} ${error.message}`);
      throw error;
    }
  }

  async close(): Promise<void> {}

  /** The absolute path of an entry, refused unless its real path is that very path under the source folder and the rules allow it. */
  private async resolve(relPath: string): Promise<string> {
    if (this.base === null) await this.test();
    const parts = relPath === "" ? [] : relPath.split("/");
    if (parts.some((p) => p === "" || p === "." || p === "..")) throw new ConnectorEntryError(relPath, "Path segments may not be empty, '.' or '..'");
    if (this.rules.dotfiles === "skip" && parts.some(isDotName)) throw new ConnectorEntryError(relPath, `${relPath} ${DOT_ENTRY}`);
    const abs = path.join(this.base!, ...parts);
    if (isInside(abs, this.dataDir!.real)) throw new ConnectorEntryError(relPath, `${relPath || "The source folder"} ${IN_DATA_DIR}`);
    let real: string;
    try {
      real = await fsp.realpath(abs);
    } catch (error) {
      throw new ConnectorEntryError(relPath, `${relPath || "The source folder"} ${describeFsError(error)}`);
    }
    if (real !== abs) throw new ConnectorEntryError(relPath, `${relPath} ${LINK_OUT}`);
    return abs;
  }

  /** dev:ino of the entry itself (a link is not followed). */
  private async identity(relPath: string, abs: string): Promise<FileIdentity> {
    try {
      return identityOf(await fsp.lstat(abs, { bigint: true }));
    } catch (error) {
      throw new ConnectorEntryError(relPath, `${relPath || "The source folder"} ${describeFsError(error)}`);
    }
  }

  /** One listed child: a file, a folder, a refused link, or null for what is left out. */
  private async entry(dir: string, relPath: string, name: string): Promise<RemoteEntry | null> {
    if (this.rules.dotfiles === "skip" && isDotName(name)) return null;
    const abs = path.join(dir, name);
    let stats: fs.BigIntStats;
    try {
      stats = await fsp.lstat(abs, { bigint: true });
      if (stats.isSymbolicLink()) {
        const target = await fsp.realpath(abs);
        if (target !== abs) {
          if (isInside(target, this.base!)) return null; // read under its own path
          return { path: relPath, name, isDirectory: false, size: 0, modifiedAt: new Date(0), refused: `${relPath} ${LINK_OUT}` };
        }
        // A reparse point that redirects nowhere (a Windows placeholder file) is read as what it is.
        stats = await fsp.stat(abs, { bigint: true });
      }
    } catch {
      return null; // gone since the listing, or a dangling link: nothing to read
    }
    // Sockets, pipes, devices: not documents, and reading a pipe would wait forever.
    if (!stats.isFile() && !stats.isDirectory()) return null;
    if (stats.isDirectory() && identityOf(stats) === this.dataDir!.identity) return null;
    this.walked.set(relPath, identityOf(stats));
    return toEntry(relPath, stats);
  }
}

function toEntry(relPath: string, stats: fs.BigIntStats): RemoteEntry {
  const name = relPath.split("/").pop() ?? "";
  return {
    path: relPath,
    name,
    isDirectory: stats.isDirectory(),
    size: stats.isDirectory() ? 0 : Number(stats.size),
    modifiedAt: stats.mtime,
  };
}
