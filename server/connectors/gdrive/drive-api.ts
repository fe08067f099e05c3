import type { Readable } from "node:stream";
import { drive, type drive_v3, type MethodOptions } from "@googleapis/drive";
import { directAgent, DOWNLOAD_TIMEOUT_MS, httpFailure, isUnavailable, REQUEST_TIMEOUT_MS, retryConfig, unavailable } from "./google-http";

export const FOLDER_MIME = "application/vnd.google-apps.folder";

/** Google Workspace documents have no bytes of their own; they are exported in these formats. */
export const EXPORTS: Readonly<Record<string, { mimeType: string; extension: string }>> = {
  "application/vnd.google-apps.document": { mimeType: "text/plain", extension: "txt" },
  "application/vnd.google-apps.spreadsheet": { mimeType: "text/csv", extension: "csv" },
  "application/vnd.google-apps.presentation": { mimeType: "text/plain", extension: "txt" },
};

export interface DriveFile {
  id: string;
  name: string;
  mimeType: string;
  size?: string;
  modifiedTime?: string;
  version?: string;
  trashed?: boolean;
}

const FILE_FIELDS = "id,name,mimeType,size,modifiedTime,version,trashed";

/** The file does not exist or this grant may not see it (Drive answers 404 for both). */
export class DriveFileNotFoundError extends Error {
  constructor(readonly fileId: string) {
    super(`Drive file ${fileId} not found or not accessible`);
    this.name = "DriveFileNotFoundError";
  }
}

/** Drive refused the access token even after a refresh. */
export class DriveAuthError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DriveAuthError";
  }
}

export class DriveApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = "DriveApiError";
  }
}

/** Supplies the bearer token; `force` asks for a fresh one after Drive answered 401. */
export type TokenSource = (force: boolean) => Promise<string>;

/** The few Drive v3 calls Sluice makes, on Google's Drive client (gaxios: timeouts, retries with backoff). */
export class DriveApi {
  private readonly client: drive_v3.Drive;

  constructor(
    private readonly apiUrl: string,
    private readonly token: TokenSource,
  ) {
    this.client = drive({ version: "v3", rootUrl: this.rootUrl, timeout: REQUEST_TIMEOUT_MS, retryConfig: retryConfig(), agent: directAgent });
  }

  /** The client keeps a path in the root only when each call names it too (it rebuilds URLs from the root's origin). */
  private get rootUrl(): string {
    return `${this.apiUrl}/`;
  }

  async about(): Promise<{ permissionId: string; emailAddress: string | null }> {
    const about = await this.call((options) => this.client.about.get({ fields: "user" }, options));
    if (!about.user?.permissionId) throw new DriveApiError(200, "Drive did not say who the user is");
    return { permissionId: about.user.permissionId, emailAddress: about.user.emailAddress ?? null };
  }

  async get(fileId: string): Promise<DriveFile> {
    return toDriveFile(await this.call((options) => this.client.files.get({ fileId, fields: FILE_FIELDS, supportsAllDrives: true }, options), fileId));
  }

  /** Every non-trashed file the grant can see, following nextPageToken. */
  async listAll(): Promise<DriveFile[]> {
    const files: DriveFile[] = [];
    let pageToken: string | undefined;
    do {
      const page = await this.call((options) =>
        this.client.files.list(
          {
            q: "trashed = false",
            pageSize: 1000,
            fields: `nextPageToken,files(${FILE_FIELDS})`,
            supportsAllDrives: true,
            includeItemsFromAllDrives: true,
            pageToken,
          },
          options,
        ),
      );
      files.push(...(page.files ?? []).map(toDriveFile));
      pageToken = page.nextPageToken || undefined;
    } while (pageToken);
    return files;
  }

  /** The file's bytes (alt=media) or, for a Google document, its export; streamed, never buffered. */
  async download(file: Pick<DriveFile, "id" | "mimeType">): Promise<Readable> {
    const exported = EXPORTS[file.mimeType];
    return this.call((options) => {
      const streamed = { ...options, responseType: "stream" as const, timeout: DOWNLOAD_TIMEOUT_MS };
      return exported
        ? this.client.files.export({ fileId: file.id, mimeType: exported.mimeType }, streamed)
        : this.client.files.get({ fileId: file.id, alt: "media", supportsAllDrives: true }, streamed);
    }, file.id);
  }

  /** One Drive call with the bearer token; after a 401 once more with a freshly refreshed token. */
  private async call<T>(send: (options: MethodOptions) => Promise<{ data: T }>, fileId?: string): Promise<T> {
    const withToken = async (force: boolean): Promise<MethodOptions> => ({
      rootUrl: this.rootUrl,
      headers: { authorization: `Bearer ${await this.token(force)}` },
    });
    try {
      try {
        return (await send(await withToken(false))).data;
      } catch (error) {
        if (httpFailure(error)?.response?.status !== 401) throw error;
        return (await send(await withToken(true))).data;
      }
    } catch (error) {
      throw driveError(error, fileId);
    }
  }
}

/** gaxios' failure as the error the callers understand; anything else (the token source's own errors) as is. */
function driveError(error: unknown, fileId: string | undefined): unknown {
  const failure = httpFailure(error);
  if (!failure) return error;
  const status = failure.response?.status;
  if (status === 401) return new DriveAuthError("Google Drive refused the access token");
  if (fileId !== undefined && status === 404) return new DriveFileNotFoundError(fileId);
  if (isUnavailable(failure)) return unavailable("Google Drive", failure);
  return new DriveApiError(status!, `Google Drive answered ${status}: ${driveMessage((error as Error).message)}`);
}

/** gaxios' message is Google's error message, or for a streamed call the raw JSON error body ({"error": {"message", ...}}). */
function driveMessage(message: string): string {
  try {
    const parsed = JSON.parse(message) as { error?: { message?: unknown } };
    if (typeof parsed.error?.message === "string") return parsed.error.message;
  } catch {
    // Not JSON: gaxios' message is already Google's.
  }
  return message.slice(0, 200);
}

function toDriveFile(file: drive_v3.Schema$File): DriveFile {
  return {
    id: file.id ?? "",
    name: file.name ?? "",
    mimeType: file.mimeType ?? "application/octet-stream",
    size: file.size ?? undefined,
    modifiedTime: file.modifiedTime ?? undefined,
    version: file.version ?? undefined,
    trashed: file.trashed ?? undefined,
  };
}
