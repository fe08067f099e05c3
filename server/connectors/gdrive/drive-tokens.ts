import type { SecretStore } from "../../secrets/secrets";
import { driveAccessKey, driveRefreshKey } from "./drive-grant.entity";
import { type GoogleOAuthClient, InvalidGrantError, type TokenGrant } from "./google-oauth";

/** Refresh this long before Google's expiry so a handed-out token is good for a while. */
const EXPIRY_MARGIN_MS = 60_000;

export interface AccessToken {
  token: string;
  expiresAt: Date;
}

/** The user has no stored grant at all. */
export class NoDriveGrantError extends Error {
  constructor() {
    super("Google Drive is not connected");
    this.name = "NoDriveGrantError";
  }
}

/** Per-user Google tokens, kept only in the secret store; refreshes are shared while one is in flight. */
export class DriveTokens {
  private readonly refreshing = new Map<string, Promise<AccessToken>>();

  constructor(
    private readonly secrets: SecretStore,
    readonly oauth: GoogleOAuthClient,
  ) {}

  async save(userId: string, grant: TokenGrant): Promise<void> {
    if (grant.refreshToken) await this.secrets.set(driveRefreshKey(userId), grant.refreshToken);
    await this.secrets.set(driveAccessKey(userId), JSON.stringify({ token: grant.accessToken, expiresAt: grant.expiresAt.toISOString() }));
  }

  async refreshToken(userId: string): Promise<string | null> {
    return this.secrets.get(driveRefreshKey(userId));
  }

  async forget(userId: string): Promise<void> {
    await this.secrets.delete(driveAccessKey(userId));
    await this.secrets.delete(driveRefreshKey(userId));
  }

  /** A valid access token, refreshed when it is close to expiry (or when `force`); InvalidGrantError when Google refuses. */
  async accessToken(userId: string, force = false): Promise<AccessToken> {
    if (!force) {
      const cached = await this.cached(userId);
      if (cached && cached.expiresAt.getTime() - Date.now() > EXPIRY_MARGIN_MS) return cached;
    }
    const inFlight = this.refreshing.get(userId);
    if (inFlight) return inFlight;
    const refresh = this.doRefresh(userId).finally(() => this.refreshing.delete(userId));
    this.refreshing.set(userId, refresh);
    return refresh;
  }

  private async cached(userId: string): Promise<AccessToken | null> {
    const raw = await this.secrets.get(driveAccessKey(userId));
    if (!raw) return null;
    try {
      const parsed = JSON.parse(raw) as { token: string; expiresAt: string };
      return { token: parsed.token, expiresAt: new Date(parsed.expiresAt) };
    } catch {
      return null;
    }
  }

  private async doRefresh(userId: string): Promise<AccessToken> {
    const refreshToken = await this.refreshToken(userId);
    if (!refreshToken) throw new NoDriveGrantError();
    try {
      const grant = await this.oauth.refresh(refreshToken);
      await this.save(userId, grant);
      return { token: grant.accessToken, expiresAt: grant.expiresAt };
    } catch (error) {
      // A dead grant is dead for every caller: drop the cached access token with it.
      if (error instanceof InvalidGrantError) await this.secrets.delete(driveAccessKey(userId));
      throw error;
    }
  }
}
