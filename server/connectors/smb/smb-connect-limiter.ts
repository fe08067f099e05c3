import type { Request, RequestHandler } from "express";
import { rateLimit, type RateLimitInfo } from "express-rate-limit";
import { TooManyRequestsError } from "../../errors";
import { actorOf } from "../../routing/auth.middleware";
import { settingsTable } from "../../settings";

export interface SmbConnectLimits {
  limit: number;
  windowMs: number;
}

/** 10 connection attempts a minute per user by default (SMB_CONNECT_LIMIT_PER_MINUTE): enough to fix a typo, too few to scan a network. */
const SMB_CONNECT_LIMITS: SmbConnectLimits = { limit: 10, windowMs: 60_000 };

/**
 * Counts, per signed-in user, the requests that make Sluice connect to an SMB server on the
 * caller's behalf (creating a source, listing its shares, linking a Windows account), successful
 * or not; past the limit they answer 429 with `Retry-After` until the window ends. Counts are in
 * this process's memory (docs/decisions/0044-smb-connect-rate-limit.md, 0486-link-under-the-connect-limit.md).
 */
export function smbConnectLimiter(limits: SmbConnectLimits = SMB_CONNECT_LIMITS): RequestHandler {
  return rateLimit({
    windowMs: limits.windowMs,
    limit: limits.limit,
    keyGenerator: (_req, res) => actorOf(res).userId,
    // Retry-After comes with the 429 from the error middleware; no RateLimit headers on other answers.
    standardHeaders: false,
    legacyHeaders: false,
    // The key is the user, never the address: a proxy's X-Forwarded-For is not ours to judge here.
    validate: { xForwardedForHeader: false },
    handler: (req, _res, next) => {
      const reset = (req as Request & { rateLimit?: RateLimitInfo }).rateLimit?.resetTime;
      const seconds = Math.max(1, Math.ceil(((reset?.getTime() ?? Date.now() + limits.windowMs) - Date.now()) / 1000));
      next(new TooManyRequestsError(`Too many SMB connection attempts; try again in ${seconds} seconds`, seconds));
    },
  });
}

/**
 * The instance's one count of SMB connection attempts, for every route that connects (app.ts
 * mounts it on the SMB source routes and the account link route): `connectsPerMinute` null lets all through.
 */
export function smbConnectAttempts(connectsPerMinute: number | null): RequestHandler {
  return connectsPerMinute === null ? (_req, _res, next) => next() : smbConnectLimiter({ limit: connectsPerMinute, windowMs: 60_000 });
}

const CONNECT_LIMIT_DEFAULT = settingsTable().find((row) => row.name === "SMB_CONNECT_LIMIT_PER_MINUTE")?.default;

/** The 429 every route under the count documents. */
export const TOO_MANY_CONNECTS = `More SMB connection attempts (source creations, share listings and Windows account links, counted together) by this user in a minute than \`SMB_CONNECT_LIMIT_PER_MINUTE\` (default ${CONNECT_LIMIT_DEFAULT}); \`Retry-After\` says when to try again; nothing was done`;
