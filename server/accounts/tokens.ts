import crypto from "node:crypto";
import { errors, jwtVerify, SignJWT } from "jose";
import { UnauthorizedError } from "../errors";
import type { SecretStore } from "../secrets/secrets";
import type { Actor } from "../access/actor";

export const TOKEN_LIFETIME_SECONDS = 24 * 60 * 60;
/** How far in the future `iat` may be: clocks of API processes on several machines differ a little. */
export const CLOCK_SKEW_SECONDS = 60;
export const SECRET_KEY = "jwt-signing-secret";

function newSigningSecret(): string {
  return crypto.randomBytes(48).toString("base64");
}

/**
 * Replaces the stored signing secret (`npm run rotate-jwt-secret`): every session token signed
 * before is refused by a server that loads the new one, i.e. after its restart.
 */
export async function rotateSigningSecret(secrets: SecretStore): Promise<void> {
  await secrets.set(SECRET_KEY, newSigningSecret());
}
/** Verified tokens remembered at most (the oldest goes first past it): one per signed-in client is plenty. */
export const VERIFIED_TOKENS_KEPT = 10_000;
const ALGORITHM = "HS256";

/** A verified session token: its actor and the session generation it was issued in (0 when the token names none). */
export interface Session {
  actor: Actor;
  generation: number;
}

/**
 * Service access tokens: HS256 JWTs with sub, email, iat, exp (docs/decisions/0010-tokens-signed-with-jose.md),
 * and `gen`, the user's session generation, once it is above 0 (docs/decisions/0381-session-generation.md).
 */
export class TokenService {
  /** The secret imported once as an HMAC key: importing it per request costs more than the HMAC itself. */
  private constructor(private readonly key: crypto.webcrypto.CryptoKey) {}

  /**
   * Tokens that passed verify(), by their exact text, with their expiry: the same bytes verify the
   * same way until `exp`, so a client's every request after its first skips the HMAC and the
   * claim checks (docs/decisions/0021-verified-token-cache.md). Failures are never kept.
   */
  private readonly verified = new Map<string, { session: Session; expiresAtMs: number }>();

  /** Loads the signing secret from the secret store, generating it on first start. */
  static async open(secrets: SecretStore, fixedSecret: string | null = null): Promise<TokenService> {
    // JWT_SECRET: API processes on several machines sign and verify with one secret.
    // Otherwise every process sharing the store (API processes of a team server) must agree on one secret.
    const secret = fixedSecret ?? (await secrets.getOrCreate(SECRET_KEY, newSigningSecret));
    const key = await crypto.subtle.importKey("raw", Buffer.from(secret, "utf8"), { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
    return new TokenService(key);
  }

  /**
   * Header `{"alg":"HS256","typ":"JWT"}`, claims in the order email, iat, exp, sub (the tokens issued before jose, byte for byte);
   * `gen` after email once the user's sessions were ended at least once.
   */
  issue(user: { id: string; email: string; sessionGeneration?: number }): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    const generation = user.sessionGeneration ?? 0;
    return new SignJWT(generation > 0 ? { email: user.email, gen: generation } : { email: user.email })
      .setProtectedHeader({ alg: ALGORITHM, typ: "JWT" })
      .setIssuedAt(now)
      .setExpirationTime(now + TOKEN_LIFETIME_SECONDS)
      .setSubject(user.id)
      .sign(this.key);
  }

  /**
   * Only our own HS256 tokens pass: an identity provider's RS256 token, a forged, unsigned or
   * expired one is a 401, and so is one we would not have issued: without `exp` or `iat`, living
   * longer than a session, or issued in the future (a token signed with a leaked secret must not live forever).
   */
  async verify(token: string): Promise<Actor> {
    return (await this.verifySession(token)).actor;
  }

  /** As verify, with the session generation the token was issued in (the caller compares it with the user's). */
  async verifySession(token: string): Promise<Session> {
    const known = this.verified.get(token);
    if (known) {
      if (Date.now() < known.expiresAtMs) return { actor: { ...known.session.actor }, generation: known.session.generation };
      this.verified.delete(token);
    }
    const session = await this.verifyFully(token);
    return { actor: { ...session.actor }, generation: session.generation };
  }

  private async verifyFully(token: string): Promise<Session> {
    try {
      const { payload } = await jwtVerify(token, this.key, { algorithms: [ALGORITHM], requiredClaims: ["exp", "iat", "sub"] });
      if (typeof payload.sub !== "string" || typeof payload.email !== "string") throw new Error("missing claims");
      if (payload.exp! - payload.iat! > TOKEN_LIFETIME_SECONDS) throw new Error("lives longer than a session");
      if (payload.iat! > Math.floor(Date.now() / 1000) + CLOCK_SKEW_SECONDS) throw new Error("issued in the future");
      if (payload.gen !== undefined && (typeof payload.gen !== "number" || !Number.isInteger(payload.gen) || payload.gen < 1)) throw new Error("bad generation");
      const session = { actor: { userId: payload.sub, email: payload.email }, generation: (payload.gen as number | undefined) ?? 0 };
      this.remember(token, session, payload.exp! * 1000);
      return session;
    } catch (error) {
      if (error instanceof errors.JWTExpired) throw new UnauthorizedError("Session expired: sign in again");
      throw new UnauthorizedError("Invalid access token: sign in again");
    }
  }

  private remember(token: string, session: Session, expiresAtMs: number): void {
    if (this.verified.size >= VERIFIED_TOKENS_KEPT) this.verified.delete(this.verified.keys().next().value!);
    this.verified.set(token, { session, expiresAtMs });
  }
}
