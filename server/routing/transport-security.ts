import type { Request } from "express";

/**
 * Whether a request's cookies are marked `Secure` (docs/decisions/0460-https-secure-cookies-and-hsts.md):
 * whenever the browser reached Sluice over HTTPS. That is a TLS connection to this server, or a
 * proxy that TRUST_PROXY trusts saying `X-Forwarded-Proto: https` (Express's `req.secure` decides
 * both, and ignores the header from anyone else), or always when PUBLIC_URL is an `https:` address.
 */
export type CookieSecurity = (req: Request) => boolean;

export function cookieSecurity(publicUrl: string): CookieSecurity {
  const always = publicUrl.startsWith("https:");
  return (req) => always || req.secure;
}
