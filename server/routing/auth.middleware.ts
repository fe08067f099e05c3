import type { NextFunction, Request, Response } from "express";
import type { Actor } from "../access/actor";
import { TOKEN_LIFETIME_SECONDS } from "../accounts/tokens";
import { UnauthorizedError } from "../errors";
import { bearerToken } from "./bearer-token";
import type { CookieSecurity } from "./transport-security";

const TOKEN_COOKIE = "access_token";

/** An Authorization header wins over the cookie (a malformed one is no token, not a fall-back to the cookie); either must carry one of our own tokens. */
function bearerOrCookie(req: Request): string | null {
  if (req.headers.authorization) return bearerToken(req);
  const cookie = (req.cookies as Record<string, string> | undefined)?.[TOKEN_COOKIE];
  return cookie || null;
}

/**
 * A valid session token of ours or an API key, whose user still exists (a deleted user's token is
 * a 401 everywhere, not a failure deeper down): `authenticate` (accounts/authenticator.ts) decides.
 * Async: Express 5 passes a rejected promise (a 401) to the error middleware.
 */
export function requireAuth(authenticate: (token: string) => Promise<Actor>) {
  return async (req: Request, res: Response, next: NextFunction) => {
    const token = bearerOrCookie(req);
    if (!token) throw new UnauthorizedError("Not authenticated: sign in first");
    const actor = await authenticate(token);
    res.locals.actor = actor;
    next();
  };
}

/** The client's address as Express derives it: the socket's, or with TRUST_PROXY the one the trusted proxies forwarded. */
export function clientAddress(req: Request): string {
  return req.ip ?? req.socket.remoteAddress ?? "unknown";
}

export function actorOf(res: Response): Actor {
  const actor = res.locals.actor as Actor | undefined;
  if (!actor) throw new UnauthorizedError();
  return actor;
}

/** HttpOnly + SameSite=Lax: the OAuth redirect back still lands signed in, cross-site POSTs carry no cookie. */
export function setTokenCookie(res: Response, token: string, security: CookieSecurity): void {
  res.cookie(TOKEN_COOKIE, token, {
    httpOnly: true,
    sameSite: "lax",
    secure: security(res.req),
    path: "/",
    maxAge: TOKEN_LIFETIME_SECONDS * 1000,
  });
}

export function clearTokenCookie(res: Response, security: CookieSecurity): void {
  res.clearCookie(TOKEN_COOKIE, { httpOnly: true, sameSite: "lax", secure: security(res.req), path: "/" });
}
