import crypto from "node:crypto";
import type { DataSource } from "typeorm";
import { assertOwnsDriveSource, requireDataSourceAccess } from "../../access/access";
import type { Actor } from "../../access/actor";
import { BadRequestError, ConflictError, HttpError, ServiceUnavailableError, UnauthorizedError, ValidationError } from "../../errors";
import type { CreatedSource, SourceCreator } from "../source-kind";
import { DriveApiError, DriveAuthError, DriveFileNotFoundError, FOLDER_MIME, type DriveApi, type DriveFile } from "./drive-api";
import type { DriveConnectors } from "./drive-connectors";
import { DriveFileRecord } from "./drive-file.entity";
import { DriveGrant } from "./drive-grant.entity";
import { DriveSourceRecord } from "./drive-source.entity";
import { NoDriveGrantError, type AccessToken } from "./drive-tokens";
import { GoogleUnavailableError } from "./google-http";
import { DRIVE_FILE_SCOPE, InvalidGrantError, OAuthError, pkcePair } from "./google-oauth";
import { isLoopbackAddress, isThisMachineOnlyHost } from "../../net/local-addresses";
import type { SecretStore } from "../../secrets/secrets";
import { OAuthStates, sameBrowserKey, sameOriginPath } from "./oauth-states";

export const CALLBACK_PATH = "/api/integrations/cloud/drive/callback";
export const NOT_CONFIGURED = "Google Drive is not configured on this instance: set GOOGLE_CLIENT_ID and GOOGLE_CLIENT_SECRET";
const NOT_CONNECTED = "Google Drive is not connected: connect it first";
const RECONNECT = "The Google Drive grant is no longer valid: reconnect Google Drive";
const FOREIGN_BROWSER =
  "This Google Drive consent was started in another browser or by another Sluice user, so nothing was connected: to connect your own Google Drive, click Connect Google Drive in Sluice in this browser";

/**
 * The browser finishing the consent is not the one that started it: someone else's consent
 * link (it would attach this browser's Google Drive to their account). The route answers a page.
 */
export class ForeignBrowserError extends HttpError {
  constructor() {
    super(403, FOREIGN_BROWSER);
  }
}

/** What the callback knows of the browser that reached it. */
export interface FinishingBrowser {
  /** The binding cookie set at connect, if this browser holds one. */
  browserKey: string | undefined;
  /** The socket's peer address. */
  peer: string | undefined;
}

export interface RegisteredFiles {
  sourceId: string;
  added: number;
  files: DriveFileRecord[];
}

/** Google Drive: the per-user connection (OAuth grant) and drive data sources built on it. */
export class DriveService {
  private states: Promise<OAuthStates> | null = null;

  constructor(
    private readonly db: DataSource,
    private readonly drive: DriveConnectors | null,
    private readonly sources: SourceCreator,
    private readonly kindName: string,
    private readonly publicUrl: string,
    private readonly secrets: SecretStore,
  ) {}

  /** Opened on first use, so an instance without Drive makes no state key. */
  private oauthStates(): Promise<OAuthStates> {
    this.states ??= OAuthStates.open(this.secrets).catch((error: unknown) => {
      this.states = null;
      throw error;
    });
    return this.states;
  }

  private get redirectUri(): string {
    return `${this.publicUrl}${CALLBACK_PATH}`;
  }

  private configured(): DriveConnectors {
    if (!this.drive) throw new ServiceUnavailableError(NOT_CONFIGURED);
    return this.drive;
  }

  async status(actor: Actor): Promise<DriveGrant | null> {
    this.configured();
    return this.db.manager.findOne(DriveGrant, { where: { userId: actor.userId } });
  }

  /**
   * A consent URL for the caller, and the browser key the calling browser keeps (as a cookie)
   * to prove at the callback that it is the browser that started. The state names the user.
   */
  async connect(actor: Actor, returnTo: string | undefined, peer: string | undefined): Promise<{ authUrl: string; browserKey: string }> {
    const drive = this.configured();
    const target = sameOriginPath(returnTo ?? "/", this.publicUrl);
    if (target === null) throw new BadRequestError("return_to must be a path on this server");
    const { verifier, challenge } = pkcePair();
    // Google sends the browser back to a loopback address and the caller is on this machine:
    // the desktop app, whose consent opens in the system browser (docs/decisions/0175-drive-consent-bound-to-browser.md).
    const thisMachineOnly = isThisMachineOnlyHost(new URL(this.redirectUri).hostname) && isLoopbackAddress(peer);
    const { state, browserKey } = await (await this.oauthStates()).issue({ userId: actor.userId, codeVerifier: verifier, returnTo: target, thisMachineOnly });
    return { authUrl: drive.tokens.oauth.authorizationUrl({ redirectUri: this.redirectUri, state, codeChallenge: challenge }), browserKey };
  }

  /**
   * The browser's return from Google (no bearer token): checks it is the browser that started
   * (its binding cookie, or this machine for a this-machine-only flow), stores the grant and
   * answers where to redirect.
   */
  async callback(query: { state?: string; code?: string; error?: string }, browser: FinishingBrowser): Promise<string> {
    const drive = this.configured();
    const pending = query.state ? await (await this.oauthStates()).open(query.state) : null;
    if (!pending) throw new BadRequestError("Unknown, tampered or expired OAuth state: start connecting Google Drive again");
    const startedHere = sameBrowserKey(browser.browserKey, pending.browserKey) || (pending.thisMachineOnly && isLoopbackAddress(browser.peer));
    if (!startedHere) throw new ForeignBrowserError();
    if (!query.code) {
      const reason = query.error && /^[a-z_]{1,64}$/.test(query.error) ? query.error : "access_denied";
      return withQuery(pending.returnTo, "drive_error", reason);
    }
    try {
      const grant = await drive.tokens.oauth.exchangeCode(query.code, pending.codeVerifier, this.redirectUri);
      if (!grant.refreshToken && !(await drive.tokens.refreshToken(pending.userId))) {
        throw new BadRequestError("Google returned no refresh token: connect Google Drive again");
      }
      const about = await drive.apiWithToken(grant.accessToken).about();
      await drive.tokens.save(pending.userId, grant);
      const record = this.db.manager.create(DriveGrant, {
        userId: pending.userId,
        providerSubject: about.permissionId,
        email: about.emailAddress,
        scopes: (grant.scopes.length ? grant.scopes : [DRIVE_FILE_SCOPE]).join(" "),
        connectedAt: new Date(),
      });
      await this.db.manager.save(DriveGrant, record);
    } catch (error) {
      if (error instanceof InvalidGrantError || error instanceof OAuthError) {
        throw new BadRequestError(`Google refused the authorization code (${error.message}): connect Google Drive again`);
      }
      throw mapGoogleError(error);
    }
    return pending.returnTo;
  }

  /** Revokes the grant at Google (best effort: an unreachable Google does not keep the tokens here) and forgets it. */
  async disconnect(actor: Actor): Promise<void> {
    const drive = this.configured();
    const refreshToken = await drive.tokens.refreshToken(actor.userId);
    if (refreshToken) await drive.tokens.oauth.revoke(refreshToken).catch(() => undefined);
    await drive.tokens.forget(actor.userId);
    await this.db.manager.delete(DriveGrant, { userId: actor.userId });
  }

  /** A short-lived token for the browser's file picker; 401 when Google refuses the stored grant. */
  async pickerToken(actor: Actor): Promise<AccessToken> {
    const drive = this.configured();
    await this.requireGrant(actor.userId);
    try {
      return await drive.tokens.accessToken(actor.userId);
    } catch (error) {
      if (error instanceof InvalidGrantError) throw new UnauthorizedError(RECONNECT);
      throw mapGoogleError(error);
    }
  }

  /** Source, auto-provisioned collection and pipeline in one transaction, as for SMB; ingestion uses the caller's grant. */
  async createSource(actor: Actor, name: string, groupId: string): Promise<CreatedSource<DriveSourceRecord>> {
    this.configured();
    return this.sources.create(actor, {
      kind: this.kindName,
      name,
      groupId,
      verify: async () => void (await this.requireGrant(actor.userId)),
      details: async (tx, sourceId) => {
        const drive = tx.create(DriveSourceRecord, { dataSourceId: sourceId, ownerUserId: actor.userId });
        await tx.insert(DriveSourceRecord, drive);
        return drive;
      },
    });
  }

  async details(sourceId: string): Promise<{ drive: DriveSourceRecord; files: DriveFileRecord[] }> {
    const drive = await this.db.manager.findOneOrFail(DriveSourceRecord, { where: { dataSourceId: sourceId } });
    const files = await this.db.manager.find(DriveFileRecord, { where: { dataSourceId: sourceId }, order: { registeredAt: "ASC", fileId: "ASC" } });
    return { drive, files };
  }

  /** Registers Drive file ids after checking each against the API with the source owner's grant. */
  async registerFiles(actor: Actor, sourceId: string, fileIds: string[]): Promise<RegisteredFiles> {
    const { api } = await this.ownedDriveSource(actor, sourceId);
    const unique = [...new Set(fileIds)];
    const found: DriveFile[] = [];
    const problems: Array<{ field: string; message: string }> = [];
    await this.guard(async () => {
      for (const [i, id] of unique.entries()) {
        try {
          const file = await api.get(id);
          if (file.trashed) problems.push({ field: `file_ids.${i}`, message: "is a trashed Drive file" });
          else if (file.mimeType === FOLDER_MIME) problems.push({ field: `file_ids.${i}`, message: "is a Drive folder, not a file" });
          else found.push(file);
        } catch (error) {
          if (!(error instanceof DriveFileNotFoundError)) throw error;
          problems.push({ field: `file_ids.${i}`, message: "is not a Drive file this grant can read" });
        }
      }
    });
    if (problems.length) throw new ValidationError(problems);
    return this.register(sourceId, found);
  }

  /** Registers every file the owner's grant covers; 409 when it covers none. */
  async ingestAll(actor: Actor, sourceId: string): Promise<RegisteredFiles> {
    const { api } = await this.ownedDriveSource(actor, sourceId);
    const files = (await this.guard(() => api.listAll())).filter((f) => f.mimeType !== FOLDER_MIME && !f.trashed);
    if (files.length === 0) throw new ConflictError("The Google Drive grant covers no files: pick files to share with Sluice first");
    return this.register(sourceId, files);
  }

  private async register(sourceId: string, files: DriveFile[]): Promise<RegisteredFiles> {
    const now = new Date();
    const added = await this.db.transaction(async (tx) => {
      const before = await tx.count(DriveFileRecord, { where: { dataSourceId: sourceId } });
      for (const file of files) {
        // The UNIQUE (data_source_id, file_id) makes registering a file twice a no-op.
        await tx
          .createQueryBuilder()
          .insert()
          .into(DriveFileRecord)
          .values({ id: crypto.randomUUID(), dataSourceId: sourceId, fileId: file.id, name: file.name, mimeType: file.mimeType, registeredAt: now })
          .orIgnore()
          .execute();
      }
      return (await tx.count(DriveFileRecord, { where: { dataSourceId: sourceId } })) - before;
    });
    const { files: registered } = await this.details(sourceId);
    return { sourceId, added, files: registered };
  }

  /** A drive source the caller can reach and whose grant is the caller's own. */
  private async ownedDriveSource(actor: Actor, sourceId: string): Promise<{ api: DriveApi }> {
    const drive = this.configured();
    const source = await requireDataSourceAccess(this.db.manager, actor, sourceId);
    if (source.kind !== this.kindName) throw new BadRequestError("This data source is not a Google Drive source");
    const details = await this.db.manager.findOneOrFail(DriveSourceRecord, { where: { dataSourceId: sourceId } });
    assertOwnsDriveSource(actor, details.ownerUserId);
    await this.requireGrant(actor.userId);
    return { api: drive.apiFor(actor.userId) };
  }

  private async requireGrant(userId: string): Promise<DriveGrant> {
    const grant = await this.db.manager.findOne(DriveGrant, { where: { userId } });
    if (!grant) throw new ConflictError(NOT_CONNECTED);
    return grant;
  }

  private async guard<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      throw mapGoogleError(error);
    }
  }
}

function mapGoogleError(error: unknown): unknown {
  if (error instanceof HttpError) return error;
  if (error instanceof InvalidGrantError || error instanceof DriveAuthError || error instanceof NoDriveGrantError) return new ConflictError(RECONNECT);
  if (error instanceof GoogleUnavailableError) return new ServiceUnavailableError(`Google Drive is unavailable: ${error.message}`);
  if (error instanceof DriveApiError) return new ServiceUnavailableError(error.message);
  return error;
}

function withQuery(path: string, key: string, value: string): string {
  const url = new URL(path, "http://x");
  url.searchParams.set(key, value);
  return `${url.pathname}${url.search}${url.hash}`;
}
