import crypto from "node:crypto";
import { EncryptJWT, jwtDecrypt } from "jose";
import type { SecretStore } from "../../secrets/secrets";

export const STATE_LIFETIME_MS = 10 * 60_000;
/** The secret-store key of the key that seals OAuth states; shared by every process using the store. */
const STATE_KEY = "drive-oauth-state-key";

export interface PendingAuthorization {
  userId: string;
  codeVerifier: string;
  returnTo: string;
  /** The one-time value the starting browser holds in its binding cookie (drive.routes.ts). */
  browserKey: string;
  /**
   * The flow was started over loopback and Google sends the browser back to a loopback
   * address: only a browser on this machine can finish it (the desktop app, whose consent
   * opens in the system browser, which does not hold the app window's cookies).
   */
  thisMachineOnly: boolean;
}

/**
 * OAuth `state` values: the pending authorization itself, sealed (JWE, AES-256-GCM) under a
 * key kept in the secret store, so any API process sharing that store (a team server behind
 * a load balancer) can finish a flow another one started. A state expires after 10 minutes;
 * a tampered or foreign one does not open. Replaying one gets nowhere: Google takes each
 * authorization code once.
 */
export class OAuthStates {
  private constructor(private readonly key: Uint8Array) {}

  static async open(secrets: SecretStore): Promise<OAuthStates> {
    const key = await secrets.getOrCreate(STATE_KEY, () => crypto.randomBytes(32).toString("base64"));
    return new OAuthStates(new Uint8Array(Buffer.from(key, "base64")));
  }

  /** A sealed state and the browser key the starting browser must present at the callback. */
  async issue(entry: Omit<PendingAuthorization, "browserKey">, now = Date.now()): Promise<{ state: string; browserKey: string }> {
    const browserKey = crypto.randomBytes(32).toString("base64url");
    const state = await new EncryptJWT({ ...entry, browserKey })
      .setProtectedHeader({ alg: "dir", enc: "A256GCM" })
      .setIssuedAt(Math.floor(now / 1000))
      .setExpirationTime(Math.floor((now + STATE_LIFETIME_MS) / 1000))
      .encrypt(this.key);
    return { state, browserKey };
  }

  /** The pending authorization a state carries; null when it is not one of ours, was tampered with or has expired. */
  async open(state: string, now = Date.now()): Promise<PendingAuthorization | null> {
    try {
      const { payload } = await jwtDecrypt(state, this.key, { currentDate: new Date(now), keyManagementAlgorithms: ["dir"], contentEncryptionAlgorithms: ["A256GCM"] });
      const { userId, codeVerifier, returnTo, browserKey, thisMachineOnly } = payload;
      if (typeof userId !== "string" || typeof codeVerifier !== "string" || typeof returnTo !== "string" || typeof browserKey !== "string") return null;
      return { userId, codeVerifier, returnTo, browserKey, thisMachineOnly: thisMachineOnly === true };
    } catch {
      return null;
    }
  }
}

/** Constant-time comparison of the binding cookie with the state's browser key. */
export function sameBrowserKey(cookie: string | undefined, browserKey: string): boolean {
  if (!cookie) return false;
  const a = Buffer.from(cookie);
  const b = Buffer.from(browserKey);
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}

/**
 * Where the browser may be sent after connecting: a path on this server only. Anything else
 * (another origin, a scheme-relative //host, backslashes) is refused so the callback cannot be
 * used as an open redirect. The check runs on the normalised path as well, since dot segments
 * can turn a path into a scheme-relative URL (`/..//evil.example` becomes `//evil.example`).
 * Returns the normalised path, or null.
 */
export function sameOriginPath(returnTo: string, publicUrl: string): string | null {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting control characters is the point of this check
  if (!returnTo.startsWith("/") || returnTo.startsWith("//") || /[\\\u0000-\u001f\u007f]/.test(returnTo)) return null;
  let url: URL;
  try {
    url = new URL(returnTo, publicUrl);
  } catch {
    return null;
  }
  if (url.origin !== new URL(publicUrl).origin) return null;
  const path = `${url.pathname}${url.search}${url.hash}`;
  // What a browser does with the Location header: it must resolve to this same origin.
  if (path.startsWith("//") || new URL(path, publicUrl).origin !== url.origin) return null;
  return path;
}
