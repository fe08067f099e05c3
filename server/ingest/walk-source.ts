import type { Connector, RemoteEntry } from "../connectors/connector";
import { ConnectorAuthError, ConnectorEntryError, ConnectorUnreachableError } from "../connectors/connector";

export interface WalkResult {
  files: RemoteEntry[];
  /** Folders that could not be listed: documents under them must not be treated as deleted. */
  unreadable: string[];
}

/** Top-level entries named in a NothingReadableError's message; the job's errors list them all. */
const NAMED_IN_MESSAGE = 10;

/**
 * The root listed entries, but every one of them failed to open and it held no file: the
 * source has nothing to index, and the job fails saying why.
 */
export class NothingReadableError extends Error {
  constructor(noun: string, failures: Array<{ path: string; message: string }>) {
    const named = failures.slice(0, NAMED_IN_MESSAGE).map((f) => `${f.path}: ${f.message}`);
    if (failures.length > NAMED_IN_MESSAGE) named.push(`and ${failures.length - NAMED_IN_MESSAGE} more`);
    super(`No ${noun} of this source could be read: ${named.join("; ")}`);
    this.name = "NothingReadableError";
  }
}

/** Folders listed at once: each listing is a few round trips, and a share has many folders. */
const FOLDERS_AT_ONCE = 4;

/**
 * Lists every file of a source, several folders at a time. A folder that cannot be opened is
 * reported and skipped. The walk fails (and so the job) when the root cannot be listed, when
 * the connection or the login fails, and when the root's entries all fail to open
 * (NothingReadableError). A top-level entry (an SMB share) is skipped whatever its error short
 * of those two, since each may have its own requirements (access list, encryption, signing);
 * deeper down only a ConnectorEntryError is, as anything else there is the source failing.
 */
export async function walkSource(
  connector: Connector,
  hooks: { onFolder(path: string): void; onFile(entry: RemoteEntry): void; onUnreadable(path: string, message: string): void; signal: AbortSignal },
): Promise<WalkResult> {
  const files: RemoteEntry[] = [];
  const unreadable: string[] = [];
  const folders = [""];
  const topLevel = new Set<string>();
  let topLevelRead = 0;
  const topLevelFailures: Array<{ path: string; message: string }> = [];

  const skippable = (folder: string, error: unknown): error is Error =>
    error instanceof ConnectorEntryError ||
    (topLevel.has(folder) && error instanceof Error && !(error instanceof ConnectorUnreachableError || error instanceof ConnectorAuthError));

  const listFolder = async (folder: string): Promise<void> => {
    hooks.onFolder(folder);
    let entries: RemoteEntry[];
    try {
      entries = await connector.list(folder);
    } catch (error) {
      if (folder === "" || !skippable(folder, error)) throw error;
      unreadable.push(folder);
      hooks.onUnreadable(folder, error.message);
      if (topLevel.has(folder)) topLevelFailures.push({ path: folder, message: error.message });
      return;
    }
    if (folder === "") {
      for (const entry of entries) if (entry.isDirectory) topLevel.add(entry.path);
      // A file at the root is something readable.
      topLevelRead += entries.length - topLevel.size;
    } else if (topLevel.has(folder)) topLevelRead++;
    for (const entry of entries) {
      if (entry.isDirectory) folders.push(entry.path);
      else {
        files.push(entry);
        hooks.onFile(entry);
      }
    }
  };

  await new Promise<void>((resolve, reject) => {
    let listing = 0;
    let failed = false;
    const pump = () => {
      if (failed) return;
      if (hooks.signal.aborted) {
        failed = true;
        return reject(hooks.signal.reason);
      }
      while (listing < FOLDERS_AT_ONCE && folders.length) {
        listing++;
        listFolder(folders.shift()!).then(
          () => {
            listing--;
            pump();
          },
          (error: unknown) => {
            failed = true;
            reject(error);
          },
        );
      }
      if (listing === 0) resolve();
    };
    pump();
  });
  if (topLevelRead === 0 && topLevelFailures.length > 0) throw new NothingReadableError(connector.topLevelName ?? "folder", topLevelFailures);
  return { files, unreadable };
}

export function isUnder(path: string, folders: string[]): boolean {
  return folders.some((folder) => path === folder || path.startsWith(`${folder}/`));
}
