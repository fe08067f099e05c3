import type { Connector, RemoteEntry } from "../connectors/connector";
import { ConnectorEntryError } from "../connectors/connector";

export interface WalkResult {
  files: RemoteEntry[];
  /** Folders that could not be listed: documents under them must not be treated as deleted. */
  unreadable: string[];
}

/** Folders listed at once: each listing is a few round trips, and a share has many folders. */
const FOLDERS_AT_ONCE = 4;

/**
 * Lists every file of a source, several folders at a time. A folder that cannot be opened is
 * reported and skipped; only a root that cannot be listed at all fails the walk (the job fails).
 */
export async function walkSource(
  connector: Connector,
  hooks: { onFolder(path: string): void; onFile(entry: RemoteEntry): void; onUnreadable(path: string, message: string): void; signal: AbortSignal },
): Promise<WalkResult> {
  const files: RemoteEntry[] = [];
  const unreadable: string[] = [];
  const folders = [""];

  const listFolder = async (folder: string): Promise<void> => {
    hooks.onFolder(folder);
    let entries: RemoteEntry[];
    try {
      entries = await connector.list(folder);
    } catch (error) {
      if (folder === "" || !(error instanceof ConnectorEntryError)) throw error;
      unreadable.push(folder);
      hooks.onUnreadable(folder, error.message);
      return;
    }
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
  return { files, unreadable };
}

export function isUnder(path: string, folders: string[]): boolean {
  return folders.some((folder) => path === folder || path.startsWith(`${folder}/`));
}
