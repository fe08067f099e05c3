import crypto from "node:crypto";

export const STATE_LIFETIME_MS = 10 * 60_000;
const MAX_PENDING = 1000;

export interface PendingAuthorization {
  userId: string;
  codeVerifier: string;
  returnTo: string;
  expiresAt: number;
}

/**
 * OAuth `state` values kept server-side: each binds the browser's return to the user who
 * started connecting, is single-use and expires after 10 minutes. In memory: a restart
 * only means the user clicks "connect" again.
 */
export class OAuthStates {
  private readonly pending = new Map<string, PendingAuthorization>();

  issue(entry: Omit<PendingAuthorization, "expiresAt">, now = Date.now()): string {
    this.prune(now);
    while (this.pending.size >= MAX_PENDING) this.pending.delete(this.pending.keys().next().value!);
    const state = crypto.randomBytes(32).toString("base64url");
    this.pending.set(state, { ...entry, expiresAt: now + STATE_LIFETIME_MS });
    return state;
  }

  /** The pending authorization for a state, removed on first use; null when unknown, used or expired. */
  take(state: string, now = Date.now()): PendingAuthorization | null {
    const entry = this.pending.get(state);
    if (!entry) return null;
    this.pending.delete(state);
    return entry.expiresAt > now ? entry : null;
  }

  private prune(now: number): void {
    for (const [state, entry] of this.pending) if (entry.expiresAt <= now) this.pending.delete(state);
  }
}

/**
 * Where the browser may be sent after connecting: a path on this server only. Anything else
 * (another origin, a scheme-relative //host, backslashes) is refused so the callback cannot be
 * used as an open redirect. Returns the normalised path, or null.
 */
export function sameOriginPath(returnTo: string, publicUrl: string): string | null {
  if (!returnTo.startsWith("/") || returnTo.startsWith("//") || /[\\\u0000-\u001f\u007f]/.test(returnTo)) return null;
  let url: URL;
  try {
    url = new URL(returnTo, publicUrl);
  } catch {
    return null;
  }
  if (url.origin !== new URL(publicUrl).origin) return null;
  return `${url.pathname}${url.search}${url.hash}`;
}
