import type { Connector, RemoteEntry } from "../connectors/connector";
import { ConnectorEntryError } from "../connectors/connector";

export interface WalkResult {
  files: RemoteEntry[];
  /** Folders that could not be listed: documents under them must not be treated as deleted. */
  unreadable: string[];
}

/**
 * Lists every file of a source breadth-first. A folder that cannot be opened is reported
 * and skipped; only a root that cannot be listed at all fails the walk (the job fails).
 */
export async function walkSource(
  connector: Connector,
  hooks: { onFolder(path: string): void; onFile(entry: RemoteEntry): void; onUnreadable(path: string, message: string): void; signal: AbortSignal },
): Promise<WalkResult> {
  const files: RemoteEntry[] = [];
  const unreadable: string[] = [];
  const folders = [""];
  while (folders.length) {
    if (hooks.signal.aborted) throw hooks.signal.reason;
    const folder = folders.shift()!;
    hooks.onFolder(folder);
    let entries: RemoteEntry[];
    try {
      entries = await connector.list(folder);
    } catch (error) {
      if (folder === "" || !(error instanceof ConnectorEntryError)) throw error;
      unreadable.push(folder);
      hooks.onUnreadable(folder, error.message);
      continue;
    }
    for (const entry of entries) {
      if (entry.isDirectory) folders.push(entry.path);
      else {
        files.push(entry);
        hooks.onFile(entry);
      }
    }
  }
  return { files, unreadable };
}

export function isUnder(path: string, folders: string[]): boolean {
  return folders.some((folder) => path === folder || path.startsWith(`${folder}/`));
}
