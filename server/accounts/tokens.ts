import crypto from "node:crypto";
import jwt from "jsonwebtoken";
import { UnauthorizedError } from "../errors";
import type { SecretStore } from "../secrets/secrets";
import type { Actor } from "../access/actor";

export const TOKEN_LIFETIME_SECONDS = 24 * 60 * 60;
const SECRET_KEY = "jwt-signing-secret";

/** Service access tokens: HS256 JWTs with sub, email, iat, exp (docs/decisions.md: Accounts and sessions). */
export class TokenService {
  /**
   * The secret as a KeyObject: given a string, jsonwebtoken first tries to parse it as a PEM
   * public key on every call, which costs more than the HMAC itself.
   */
  private readonly key: crypto.KeyObject;

  private constructor(secret: string) {
    this.key = crypto.createSecretKey(Buffer.from(secret, "utf8"));
  }

  /** Loads the signing secret from the secret store, generating it on first start. */
  static async open(secrets: SecretStore, fixedSecret: string | null = null): Promise<TokenService> {
    // JWT_SECRET: API processes on several machines sign and verify with one secret.
    if (fixedSecret) return new TokenService(fixedSecret);
    // Every process sharing the store (API processes of a team server) must agree on one secret.
    return new TokenService(await secrets.getOrCreate(SECRET_KEY, () => crypto.randomBytes(48).toString("base64")));
  }

  issue(user: { id: string; email: string }): string {
    return jwt.sign({ email: user.email }, this.key, {
      algorithm: "HS256",
      subject: user.id,
      expiresIn: TOKEN_LIFETIME_SECONDS,
    });
  }

  /** Only our own HS256 tokens pass: an identity provider's RS256 token, a forged or an expired one is a 401. */
  verify(token: string): Actor {
    try {
      const claims = jwt.verify(token, this.key, { algorithms: ["HS256"] });
      if (typeof claims !== "object" || typeof claims.sub !== "string" || typeof claims.email !== "string") {
        throw new Error("missing claims");
      }
      return { userId: claims.sub, email: claims.email };
    } catch (error) {
      if (error instanceof jwt.TokenExpiredError) throw new UnauthorizedError("Session expired: sign in again");
      throw new UnauthorizedError("Invalid access token: sign in again");
    }
  }
}
