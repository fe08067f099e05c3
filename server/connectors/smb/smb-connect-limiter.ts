import type { Request, RequestHandler } from "express";
import { rateLimit, type RateLimitInfo } from "express-rate-limit";
import { TooManyRequestsError } from "../../errors";
import { actorOf } from "../../routing/auth.middleware";

export interface SmbConnectLimits {
  limit: number;
  windowMs: number;
}

/** 10 connection attempts a minute per user by default (SMB_CONNECT_LIMIT_PER_MINUTE): enough to fix a typo, too few to scan a network. */
const SMB_CONNECT_LIMITS: SmbConnectLimits = { limit: 10, windowMs: 60_000 };

/**
 * Counts, per signed-in user, the requests that make Sluice connect to an SMB server of the
 * caller's choosing (creating a source, listing its shares), successful or not; past the limit
 * they answer 429 with `Retry-After` until the window ends. Counts are in this process's memory
 * (docs/decisions/0044-smb-connect-rate-limit.md).
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
