import type { Readable } from "node:stream";
import { ConnectorAuthError, ConnectorEntryError, ConnectorUnreachableError, type Connector, type RemoteEntry } from "../connector";
import { DriveAuthError, DriveFileNotFoundError, EXPORTS, FOLDER_MIME, type DriveApi, type DriveFile } from "./drive-api";
import { GoogleUnavailableError } from "./google-http";
import { InvalidGrantError } from "./google-oauth";
import { NoDriveGrantError } from "./drive-tokens";

/** Registered files looked up at once while listing. */
const LOOKUPS_IN_FLIGHT = 8;

/** The name ingestion sees: exported Google documents get the extension of their export format. */
function entryName(file: Pick<DriveFile, "name" | "mimeType">): string {
  const exported = EXPORTS[file.mimeType];
  if (!exported) return file.name;
  return file.name.toLowerCase().endsWith(`.${exported.extension}`) ? file.name : `${file.name}.${exported.extension}`;
}

function toEntry(file: DriveFile): RemoteEntry {
  const modifiedAt = file.modifiedTime ? new Date(file.modifiedTime) : new Date(0);
  return {
    path: file.id,
    name: entryName(file),
    isDirectory: false,
    size: file.size ? Number(file.size) : 0,
    modifiedAt,
    version: file.version ?? file.modifiedTime ?? undefined,
    mimeType: file.mimeType,
  };
}

/**
 * A drive data source as ingestion sees it: a flat root of the registered files, each path a
 * Drive file id. Files trashed or no longer visible to the grant are left out, so ingestion
 * removes their documents.
 */
export class DriveConnector implements Connector {
  private readonly known = new Map<string, DriveFile>();

  constructor(
    private readonly api: DriveApi,
    private readonly fileIds: string[],
  ) {}

  async test(): Promise<void> {
    await this.guard(() => this.api.about());
  }

  async list(path: string): Promise<RemoteEntry[]> {
    if (path !== "") return [];
    const found: RemoteEntry[] = [];
    let next = 0;
    const lane = async () => {
      while (next < this.fileIds.length) {
        const id = this.fileIds[next++];
        const file = await this.lookup(id);
        if (file) found.push(toEntry(file));
      }
    };
    await Promise.all(Array.from({ length: Math.min(LOOKUPS_IN_FLIGHT, this.fileIds.length) }, lane));
    return found.sort((a, b) => a.path.localeCompare(b.path));
  }

  async stat(path: string): Promise<RemoteEntry> {
    const file = await this.lookup(path);
    if (!file) throw new ConnectorEntryError(path, "The Drive file is gone, trashed or no longer shared with this grant");
    return toEntry(file);
  }

  async read(path: string): Promise<Readable> {
    const file = this.known.get(path) ?? (await this.lookup(path));
    if (!file) throw new ConnectorEntryError(path, "The Drive file is gone, trashed or no longer shared with this grant");
    try {
      return await this.guard(() => this.api.download(file));
    } catch (error) {
      if (error instanceof ConnectorAuthError || error instanceof ConnectorUnreachableError) throw error;
      throw new ConnectorEntryError(path, (error as Error).message);
    }
  }

  async close(): Promise<void> {
    this.known.clear();
  }

  /** The file when it is still there for this grant; null when gone, trashed or a folder. */
  private async lookup(id: string): Promise<DriveFile | null> {
    try {
      const file = await this.guard(() => this.api.get(id));
      if (file.trashed || file.mimeType === FOLDER_MIME) return null;
      this.known.set(id, file);
      return file;
    } catch (error) {
      if (error instanceof DriveFileNotFoundError) return null;
      throw error;
    }
  }

  /** Maps grant and availability failures onto the connector errors the job understands. */
  private async guard<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      if (error instanceof InvalidGrantError || error instanceof DriveAuthError) {
        throw new ConnectorAuthError("Google Drive refused the stored grant: reconnect Google Drive");
      }
      if (error instanceof NoDriveGrantError) throw new ConnectorAuthError("The source owner has disconnected Google Drive");
      if (error instanceof GoogleUnavailableError) throw new ConnectorUnreachableError(error.message);
      throw error;
    }
  }
}
