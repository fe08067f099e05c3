import crypto from "node:crypto";
import { CodeChallengeMethod, OAuth2Client, type Credentials } from "google-auth-library";
import { directAgent, httpFailure, isUnavailable, REQUEST_TIMEOUT_MS, retryConfig, unavailable } from "./google-http";

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

/**
 * RFC 7636 S256 verifier and challenge. Ours rather than the library's generateCodeVerifierAsync:
 * connecting issues the verifier with the state synchronously, and these are two crypto calls.
 */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = crypto.randomBytes(48).toString("base64url");
  const challenge = crypto.createHash("sha256").update(verifier).digest("base64url");
  return { verifier, challenge };
}

/** OAuth2Client with its refresh grant in reach: the grants live in our secret store, one client serves every user. */
class GrantClient extends OAuth2Client {
  refreshGrant(refreshToken: string) {
    return this.refreshToken(refreshToken);
  }
}

/** The OAuth 2.0 client of the instance (authorization code + PKCE, refresh, revoke), on google-auth-library. */
export class GoogleOAuthClient {
  private readonly client: GrantClient;

  constructor(readonly config: GoogleClientConfig) {
    this.client = new GrantClient({
      clientId: config.clientId,
      clientSecret: config.clientSecret,
      endpoints: {
        oauth2AuthBaseUrl: config.authUrl,
        oauth2TokenUrl: config.tokenUrl,
        // Google's revocation endpoint sits next to its token endpoint (oauth2.googleapis.com/revoke).
        oauth2RevokeUrl: new URL("revoke", config.tokenUrl).toString(),
      },
      transporterOptions: { timeout: REQUEST_TIMEOUT_MS, retryConfig: retryConfig(), agent: directAgent },
    });
  }

  authorizationUrl(opts: { redirectUri: string; state: string; codeChallenge: string }): string {
    return this.client.generateAuthUrl({
      redirect_uri: opts.redirectUri,
      scope: DRIVE_FILE_SCOPE,
      access_type: "offline",
      // Always ask again so Google always hands out a refresh token.
      prompt: "consent",
      include_granted_scopes: true,
      state: opts.state,
      code_challenge: opts.codeChallenge,
      code_challenge_method: CodeChallengeMethod.S256,
    });
  }

  exchangeCode(code: string, codeVerifier: string, redirectUri: string): Promise<TokenGrant> {
    return this.tokenRequest(() => this.client.getToken({ code, codeVerifier, redirect_uri: redirectUri }));
  }

  refresh(refreshToken: string): Promise<TokenGrant> {
    return this.tokenRequest(() => this.client.refreshGrant(refreshToken));
  }

  /** Revokes a token (and with a refresh token, the whole grant). A token Google no longer knows is already revoked. */
  async revoke(token: string): Promise<void> {
    try {
      await this.client.revokeToken(token);
    } catch (error) {
      const failure = httpFailure(error);
      if (!failure) throw error;
      if (failure.response?.status === 400) return;
      throw unavailable("Google's revocation endpoint", failure);
    }
  }

  private async tokenRequest(send: () => Promise<{ tokens: Credentials }>): Promise<TokenGrant> {
    let tokens: Credentials;
    try {
      ({ tokens } = await send());
    } catch (error) {
      throw tokenError(error);
    }
    if (typeof tokens.access_token !== "string") throw new OAuthError("invalid_response", "The token endpoint returned no access token");
    return {
      accessToken: tokens.access_token,
      refreshToken: typeof tokens.refresh_token === "string" ? tokens.refresh_token : null,
      // The library turns Google's expires_in into expiry_date; an answer without one is taken as Google's usual hour.
      expiresAt: new Date(typeof tokens.expiry_date === "number" ? tokens.expiry_date : Date.now() + 3600_000),
      scopes: typeof tokens.scope === "string" ? tokens.scope.split(/\s+/).filter(Boolean) : [],
    };
  }
}

/** The token endpoint's refusal, from its OAuth error body ({"error", "error_description"}). */
function tokenError(error: unknown): unknown {
  const failure = httpFailure(error);
  if (!failure) return error;
  const body = (failure.response?.data ?? {}) as { error?: unknown; error_description?: unknown };
  const code = typeof body.error === "string" ? body.error : `http_${failure.response?.status}`;
  const description = typeof body.error_description === "string" ? body.error_description : code;
  if (code === "invalid_grant") return new InvalidGrantError(description);
  if (isUnavailable(failure)) return unavailable("Google's token endpoint", failure);
  return new OAuthError(code, description);
}
