import { Readable } from "node:stream";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { fetchWithRetry, GoogleUnavailableError } from "./google-http";

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

/** The few Drive v3 calls Sluice makes, over fetch with retries. */
export class DriveApi {
  constructor(
    private readonly apiUrl: string,
    private readonly token: TokenSource,
  ) {}

  async about(): Promise<{ permissionId: string; emailAddress: string | null }> {
    const body = (await (await this.call("/drive/v3/about", { fields: "user" })).json()) as {
      user?: { permissionId?: string; emailAddress?: string };
    };
    if (!body.user?.permissionId) throw new DriveApiError(200, "Drive did not say who the user is");
    return { permissionId: body.user.permissionId, emailAddress: body.user.emailAddress ?? null };
  }

  async get(fileId: string): Promise<DriveFile> {
    const res = await this.call(`/drive/v3/files/${encodeURIComponent(fileId)}`, { fields: FILE_FIELDS, supportsAllDrives: "true" }, fileId);
    return (await res.json()) as DriveFile;
  }

  /** Every non-trashed file the grant can see, following nextPageToken. */
  async listAll(): Promise<DriveFile[]> {
    const files: DriveFile[] = [];
    let pageToken: string | undefined;
    do {
      const query: Record<string, string> = {
        q: "trashed = false",
        pageSize: "1000",
        fields: `nextPageToken,files(${FILE_FIELDS})`,
        supportsAllDrives: "true",
        includeItemsFromAllDrives: "true",
      };
      if (pageToken) query.pageToken = pageToken;
      const body = (await (await this.call("/drive/v3/files", query)).json()) as { files?: DriveFile[]; nextPageToken?: string };
      files.push(...(body.files ?? []));
      pageToken = body.nextPageToken || undefined;
    } while (pageToken);
    return files;
  }

  /** The file's bytes (alt=media) or, for a Google document, its export; streamed, never buffered. */
  async download(file: Pick<DriveFile, "id" | "mimeType">): Promise<Readable> {
    const exported = EXPORTS[file.mimeType];
    const res = exported
      ? await this.call(`/drive/v3/files/${encodeURIComponent(file.id)}/export`, { mimeType: exported.mimeType }, file.id)
      : await this.call(`/drive/v3/files/${encodeURIComponent(file.id)}`, { alt: "media", supportsAllDrives: "true" }, file.id);
    if (!res.body) return Readable.from([]);
    return Readable.fromWeb(res.body as unknown as WebReadableStream<Uint8Array>);
  }

  private async call(path: string, query: Record<string, string>, fileId?: string): Promise<Response> {
    const url = `${this.apiUrl}${path}?${new URLSearchParams(query).toString()}`;
    let res = await fetchWithRetry(url, { headers: { authorization: `Bearer ${await this.token(false)}` } });
    if (res.status === 401) {
      await res.body?.cancel().catch(() => undefined);
      res = await fetchWithRetry(url, { headers: { authorization: `Bearer ${await this.token(true)}` } });
      if (res.status === 401) throw new DriveAuthError("Google Drive refused the access token");
    }
    if (res.ok) return res;
    const text = await res.text().catch(() => "");
    if (fileId !== undefined && res.status === 404) throw new DriveFileNotFoundError(fileId);
    if (res.status === 429 || res.status >= 500) throw new GoogleUnavailableError(`Google Drive answered ${res.status}`);
    throw new DriveApiError(res.status, `Google Drive answered ${res.status}: ${driveMessage(text)}`);
  }
}

function driveMessage(text: string): string {
  try {
    const parsed = JSON.parse(text) as { error?: { message?: string } };
    return parsed.error?.message ?? text.slice(0, 200);
  } catch {
    return text.slice(0, 200);
  }
}
