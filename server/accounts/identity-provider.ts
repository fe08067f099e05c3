import { createRemoteJWKSet, jwtVerify, type JWTPayload } from "jose";
import { ServiceUnavailableError, UnauthorizedError } from "../errors";
import type { Config } from "../config";

export interface IdentityClaims {
  subject: string;
  email: string;
  name: string | null;
  picture: string | null;
}

/** Verifies an identity provider's session JWT against its JWKS, issuer and audience (all three required by config.ts). */
export class IdentityProvider {
  private readonly jwks: ReturnType<typeof createRemoteJWKSet> | null;

  constructor(private readonly config: Config["idp"]) {
    this.jwks = config ? createRemoteJWKSet(new URL(config.jwksUrl), { timeoutDuration: 5000 }) : null;
  }

  get configured(): boolean {
    return this.jwks !== null;
  }

  /** 503 when no provider is configured (whatever was sent), else 401 for a missing or bad token. */
  async verify(token: string | null): Promise<IdentityClaims> {
    if (!this.config || !this.jwks) {
      throw new ServiceUnavailableError("Social sign-in is not configured on this instance; sign in with email and password");
    }
    if (!token) throw new UnauthorizedError("Send the identity provider's session token as a Bearer token");
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, this.jwks, {
        issuer: this.config.issuer,
        audience: this.config.audience,
        algorithms: ["RS256", "RS384", "RS512", "ES256", "ES384", "PS256", "EdDSA"],
      }));
    } catch (error) {
      const code = (error as { code?: string }).code ?? "";
      if (code === "ERR_JWKS_TIMEOUT" || code === "ERR_JOSE_GENERIC" || (error as Error).name === "TypeError") {
        throw new ServiceUnavailableError("The identity provider's keys could not be fetched; try again later");
      }
      throw new UnauthorizedError("Identity provider session token is invalid or expired");
    }
    const email = typeof payload.email === "string" ? payload.email.trim().toLowerCase() : "";
    if (!payload.sub || !email) throw new UnauthorizedError("Identity provider session token lacks a subject or email");
    // Only an explicit false (some providers send a string) is refused: OIDC makes the claim optional and some providers omit it (docs/decisions/0013-social-sign-in.md).
    if (payload.email_verified === false || payload.email_verified === "false") {
      throw new UnauthorizedError("The identity provider has not verified this email address; verify it with the provider, then sign in again");
    }
    return {
      subject: payload.sub,
      email,
      name: typeof payload.name === "string" ? payload.name : null,
      picture: typeof payload.picture === "string" ? payload.picture : null,
    };
  }
}
