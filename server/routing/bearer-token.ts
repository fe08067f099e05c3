import type { Request } from "express";

/**
 * The token of an `Authorization: Bearer TOKEN` header, or null when there is no such header or it
 * is not a well-formed bearer (another scheme, no token, two words). The one reading of the header:
 * sign-in by token or API key, the identity provider's exchange and the cross-site check agree on
 * what a bearer request is.
 */
export function bearerToken(req: Pick<Request, "headers">): string | null {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? "");
  return match ? match[1] : null;
}
