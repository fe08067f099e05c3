import type { Request, Router } from "express";
import { documentedRouter } from "../routing/documented-router";
import { presentInstance } from "./instance.presenters";
import { isLoopbackAddress } from "../net/local-addresses";

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

/** administratorsOnly: a LAN server or ADMIN_EMAILS set (access/instance-roles.ts `guarded`). */
export function instanceRoutes(teamServer: boolean, administratorsOnly: boolean): Router {
  const routes = documentedRouter("Instance");
  routes.get(
    "/instance",
    {
      summary: "What this instance lets the caller do with its settings",
      returns:
        "`can_change_settings`: true for the desktop user at the server's own machine; `administrators_only`: catalog models and folder sources need an administrator here (a LAN server, or ADMIN_EMAILS set)",
    },
    (_input, req, res) => {
      res.json(presentInstance(canChangeSettings(req, teamServer), administratorsOnly));
    },
  );
  return routes.router;
}
