import type { NextFunction, Request, Response } from "express";

/**
 * The Content-Security-Policy of every response, the UI's included (and the desktop window's,
 * main/main.ts). The built UI is external module scripts and one stylesheet, so no inline
 * script or style is allowed; React's `style` props go through the CSSOM, which CSP does not
 * govern. No page may frame the app (clickjacking).
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

/**
 * Over HTTPS (a TLS connection, or a proxy TRUST_PROXY trusts saying so: `req.secure`), browsers
 * are told to come back over HTTPS only, for a year. Not for subdomains: a LAN machine's name
 * says nothing of the names under it (docs/decisions/0460-https-secure-cookies-and-hsts.md).
 */
const STRICT_TRANSPORT_SECURITY = "max-age=31536000";

export function securityHeaders() {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (req.secure) res.setHeader("Strict-Transport-Security", STRICT_TRANSPORT_SECURITY);
    // API answers carry accounts, keys and documents' text: no browser or proxy may keep them.
    if (req.path === "/api" || req.path.startsWith("/api/")) res.setHeader("Cache-Control", "no-store");
    res.setHeader("Content-Security-Policy", CONTENT_SECURITY_POLICY);
    // For browsers that predate frame-ancestors.
    res.setHeader("X-Frame-Options", "DENY");
    res.setHeader("X-Content-Type-Options", "nosniff");
    res.setHeader("Referrer-Policy", "no-referrer");
    next();
  };
}
