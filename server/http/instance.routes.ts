import type { Request, Router } from "express";
import { documentedRouter } from "../routing/documented-router";
import { presentInstance } from "./instance.presenters";
import { isLoopbackAddress } from "../net/local-addresses";
import type { CertificateSummary } from "../tls/tls-credentials";

/**
 * Whether the person viewing can change this instance's settings (environment variables such as
 * GOOGLE_CLIENT_ID): only someone at the machine a desktop install runs on, i.e. a request over
 * loopback to a server on SQLite. A team server (DATABASE_URL) has an administrator elsewhere,
 * and a LAN client of a desktop install cannot restart it. The peer address is the socket's, so
 * a forwarded header cannot claim loopback.
 */
export function canChangeSettings(req: Request, teamServer: boolean): boolean {
  return !teamServer && isLoopbackAddress(req.socket.remoteAddress);
}

/** administratorsOnly: a LAN server or ADMIN_EMAILS set (access/instance-roles.ts `guarded`); tls: the certificate served, null over plain HTTP. */
export function instanceRoutes(teamServer: boolean, administratorsOnly: boolean, tls: CertificateSummary | null): Router {
  const routes = documentedRouter("Instance");
  routes.get(
    "/instance",
    {
      summary: "What this instance lets the caller do with its settings",
      returns:
        "`can_change_settings`: true for the desktop user at the server's own machine; `administrators_only`: catalog models and folder sources need an administrator here (a LAN server, or ADMIN_EMAILS set); `tls`: when this server speaks HTTPS itself (TLS_CERT), `{certificate_sha256, self_signed, expires_at}` of its certificate, the fingerprint as browsers show it (colon-separated hex), else null",
    },
    (_input, req, res) => {
      res.json(presentInstance(canChangeSettings(req, teamServer), administratorsOnly, tls));
    },
  );
  return routes.router;
}
