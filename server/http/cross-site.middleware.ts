import type { NextFunction, Request, Response } from "express";
import { ForbiddenError } from "../errors";
import { bearerToken } from "../routing/bearer-token";

/** Methods that change nothing: a cross-site page may cause them, and learns nothing from the answer. */
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

export interface RequestFacts {
  method: string;
  /** The Host header (already checked by the host guard). */
  host: string | undefined;
  /** "https" over TLS (or from a proxy TRUST_PROXY trusts saying so), else "http": the scheme of the page that may send it. */
  protocol: string;
  origin: string | undefined;
  secFetchSite: string | undefined;
  /** The request's bearer token (routing/bearer-token.ts), or null. */
  bearer: string | null;
}

function originOf(value: string): string | null {
  try {
    const origin = new URL(value).origin;
    return origin === "null" ? null : origin;
  } catch {
    return null;
  }
}

/**
 * Why a request must be refused as cross-site, or null. A state-changing request that a
 * browser could send with the cookie on its own (a form post from another site, or from
 * another port of this host, which SameSite=Lax counts as the same site) must come from a
 * page of this app: its Origin is the PUBLIC_URL origin or the origin the request itself was
 * addressed to. Without Origin, `Sec-Fetch-Site` decides; with neither it is not a browser.
 * A bearer token is never sent by a browser on its own, so such clients are not checked.
 */
export function crossSiteRefusal(req: RequestFacts, publicUrl: string): string | null {
  if (SAFE_METHODS.has(req.method.toUpperCase()) || req.bearer !== null) return null;
  const allowed = [originOf(publicUrl), req.host ? originOf(`${req.protocol}://${req.host}`) : null];
  if (req.origin !== undefined) {
    const origin = originOf(req.origin);
    if (origin !== null && allowed.includes(origin)) return null;
    return `Cross-site request refused: it came from a page at ${req.origin.slice(0, 200)}, not from Sluice (${originOf(publicUrl)})`;
  }
  const site = req.secFetchSite?.toLowerCase();
  if (site === undefined || site === "same-origin" || site === "none") return null;
  return `Cross-site request refused: it came from a page on another ${site === "same-site" ? "port or subdomain" : "site"}, not from Sluice (${originOf(publicUrl)})`;
}

export function refuseCrossSite(publicUrl: string) {
  return (req: Request, _res: Response, next: NextFunction): void => {
    const refusal = crossSiteRefusal(
      {
        method: req.method,
        host: req.headers.host,
        protocol: req.protocol,
        origin: req.headers.origin,
        secFetchSite: header(req, "sec-fetch-site"),
        bearer: bearerToken(req),
      },
      publicUrl,
    );
    if (refusal) throw new ForbiddenError(refusal);
    next();
  };
}

function header(req: Request, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
