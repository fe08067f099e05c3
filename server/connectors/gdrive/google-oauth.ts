import crypto from "node:crypto";
import { fetchWithRetry, GoogleUnavailableError } from "./google-http";

export interface GoogleClientConfig {
  clientId: string;
  clientSecret: string;
  authUrl: string;
  tokenUrl: string;
  apiUrl: string;
}

export const DRIVE_FILE_SCOPE = "https://www.googleapis.com/auth/drive.file";

export interface TokenGrant {
  accessToken: string;
  /** Absent on refreshes unless Google rotates it. */
  refreshToken: string | null;
  expiresAt: Date;
  scopes: string[];
}

/** The token endpoint refused the grant (OAuth error invalid_grant): the user must connect again. */
export class InvalidGrantError extends Error {
  constructor(message = "Google refused the stored grant") {
    super(message);
    this.name = "InvalidGrantError";
  }
}

/** Any other refusal of the token endpoint (bad client, bad request). */
export class OAuthError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "OAuthError";
  }
}

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = crypto.randomBytes(48).toString("base64url");
  const challenge = crypto.createHash("sha256").update(verifier).digest("base64url");
  return { verifier, challenge };
}

/** The OAuth 2.0 client of the instance (authorization code + PKCE, refresh, revoke), over plain fetch. */
export class GoogleOAuthClient {
  constructor(readonly config: GoogleClientConfig) {}

  authorizationUrl(opts: { redirectUri: string; state: string; codeChallenge: string }): string {
    const url = new URL(this.config.authUrl);
    url.searchParams.set("client_id", this.config.clientId);
    url.searchParams.set("redirect_uri", opts.redirectUri);
    url.searchParams.set("response_type", "code");
    url.searchParams.set("scope", DRIVE_FILE_SCOPE);
    url.searchParams.set("access_type", "offline");
    // Always ask again so Google always hands out a refresh token.
    url.searchParams.set("prompt", "consent");
    url.searchParams.set("include_granted_scopes", "true");
    url.searchParams.set("state", opts.state);
    url.searchParams.set("code_challenge", opts.codeChallenge);
    url.searchParams.set("code_challenge_method", "S256");
    return url.toString();
  }

  exchangeCode(code: string, codeVerifier: string, redirectUri: string): Promise<TokenGrant> {
    return this.tokenRequest({ grant_type: "authorization_code", code, code_verifier: codeVerifier, redirect_uri: redirectUri });
  }

  refresh(refreshToken: string): Promise<TokenGrant> {
    return this.tokenRequest({ grant_type: "refresh_token", refresh_token: refreshToken });
  }

  /** Revokes a token (and with a refresh token, the whole grant). A token Google no longer knows is already revoked. */
  async revoke(token: string): Promise<void> {
    const res = await fetchWithRetry(this.revokeUrl(), {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token }).toString(),
    });
    await res.body?.cancel().catch(() => undefined);
    if (res.ok || res.status === 400) return;
    throw new GoogleUnavailableError(`Google answered ${res.status} to the revocation`);
  }

  /** Google's revocation endpoint sits next to its token endpoint (oauth2.googleapis.com/revoke). */
  private revokeUrl(): string {
    return new URL("revoke", this.config.tokenUrl).toString();
  }

  private async tokenRequest(params: Record<string, string>): Promise<TokenGrant> {
    const res = await fetchWithRetry(this.config.tokenUrl, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
      body: new URLSearchParams({ ...params, client_id: this.config.clientId, client_secret: this.config.clientSecret }).toString(),
    });
    const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
    if (!res.ok) {
      const code = typeof body.error === "string" ? body.error : `http_${res.status}`;
      const description = typeof body.error_description === "string" ? body.error_description : code;
      if (code === "invalid_grant") throw new InvalidGrantError(description);
      if (res.status === 429 || res.status >= 500) throw new GoogleUnavailableError(`Google's token endpoint answered ${res.status}`);
      throw new OAuthError(code, description);
    }
    if (typeof body.access_token !== "string") throw new OAuthError("invalid_response", "The token endpoint returned no access token");
    const expiresIn = typeof body.expires_in === "number" ? body.expires_in : Number(body.expires_in ?? 3600);
    return {
      accessToken: body.access_token,
      refreshToken: typeof body.refresh_token === "string" ? body.refresh_token : null,
      expiresAt: new Date(Date.now() + (Number.isFinite(expiresIn) ? expiresIn : 3600) * 1000),
      scopes: typeof body.scope === "string" ? body.scope.split(/\s+/).filter(Boolean) : [],
    };
  }
}
