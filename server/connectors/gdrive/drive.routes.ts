import type { Request, Response, Router } from "express";
import type { AuditLog } from "../../audit/audit";
import { recordAction } from "../../routing/audit-event";
import { actorOf } from "../../routing/auth.middleware";
import { documentedRouter } from "../../routing/documented-router";
import type { CookieSecurity } from "../../routing/transport-security";
import { idParams } from "../../routing/common.schemas";
import { CALLBACK_PATH, ForeignBrowserError, type DriveService } from "./drive.service";
import { STATE_LIFETIME_MS } from "./oauth-states";
import { presentCreatedDriveSource, presentDriveStatus, presentPickerToken, presentRegisteredFiles } from "./drive.presenters";
import { connectDriveQuery, createDriveSourceBody, driveCallbackQuery, registerDriveFilesBody } from "./drive.schemas";

/**
 * The one-time cookie that binds a consent to the browser that asked for it: set by connect,
 * sent back only to the callback (its path), with SameSite=Lax so Google's top-level redirect
 * back carries it.
 */
const BROWSER_KEY_COOKIE = "sluice_drive_consent";

function cookieOptions(req: Request, security: CookieSecurity) {
  return { httpOnly: true, sameSite: "lax" as const, secure: security(req), path: CALLBACK_PATH };
}

/**
 * The browser's return from Google's consent page. Public (mounted before requireAuth): it
 * carries no bearer token; the user comes from the sealed state, and the binding cookie shows
 * this is the browser that started.
 */
export function driveCallbackRoutes(drive: DriveService, secureCookie: CookieSecurity): Router {
  const routes = documentedRouter("Google Drive");
  routes.get("/integrations/cloud/drive/callback", {
    summary: "The browser's return from Google's consent page (not for API clients)",
    query: driveCallbackQuery,
    status: 302,
    returns: "Redirects to the return_to path of the connect call, with `drive_error` when the user declined",
    errors: {
      400: "Unknown, tampered or expired state, or Google refused the code",
      403: "This browser did not start connecting (no matching consent cookie): nothing is connected; an HTML page for browsers",
      503: "No Google OAuth client is configured, or Google cannot be reached",
    },
    public: true,
  }, async ({ query }, req, res) => {
    res.setHeader("Cache-Control", "no-store");
    const browserKey = (req.cookies as Record<string, string> | undefined)?.[BROWSER_KEY_COOKIE];
    let location: string;
    try {
      location = await drive.callback(query, { browserKey, peer: req.socket.remoteAddress });
    } catch (error) {
      if (error instanceof ForeignBrowserError) return refuseForeignBrowser(res, error);
      throw error;
    }
    res.clearCookie(BROWSER_KEY_COOKIE, cookieOptions(req, secureCookie));
    res.redirect(302, location);
  });
  return routes.router;
}

/** A person lands here from Google: a page that says what happened (JSON for API clients). */
function refuseForeignBrowser(res: Response, error: ForeignBrowserError): void {
  res.status(error.status).format({
    json: () => res.json({ detail: error.detail }),
    html: () =>
      res.send(
        [
          "<!doctype html>",
          '<html lang="en"><head><meta charset="utf-8"><title>Google Drive was not connected - Sluice</title></head><body>',
          "<h1>Google Drive was not connected</h1>",
          "<p>This Google consent was started in another browser, or by another Sluice user. Finishing it here would have given",
          " that account your Google Drive, so Sluice connected nothing.</p>",
          "<p>To connect your own Google Drive, open Sluice in this browser, sign in and click <strong>Connect Google Drive</strong>.</p>",
          '<p><a href="/">Open Sluice</a></p>',
          "</body></html>",
        ].join("\n"),
      ),
    default: () => res.json({ detail: error.detail }),
  });
}

/** The signed-in Drive endpoints: connection and drive data sources. */
export function driveRoutes(drive: DriveService, secureCookie: CookieSecurity, audit: AuditLog): Router {
  const routes = documentedRouter("Google Drive");

  routes.get("/integrations/cloud/drive", {
    summary: "Whether the caller has connected Google Drive",
    returns: "`{connected, provider_subject, scopes, ...}`",
    errors: { 503: "No Google OAuth client is configured" },
  }, async (_input, _req, res) => {
    res.json(presentDriveStatus(await drive.status(actorOf(res))));
  });

  routes.post("/integrations/cloud/drive/connect", {
    summary: "Start connecting Google Drive; sets the one-time cookie that lets this browser finish the consent",
    query: connectDriveQuery,
    returns: "`{auth_url}`: Google's consent page, to open in this browser",
    errors: { 400: "return_to is not a path on this server", 503: "No Google OAuth client is configured" },
  }, async ({ query: { return_to } }, req, res) => {
    const { authUrl, browserKey } = await drive.connect(actorOf(res), return_to, req.socket.remoteAddress);
    res.cookie(BROWSER_KEY_COOKIE, browserKey, { ...cookieOptions(req, secureCookie), maxAge: STATE_LIFETIME_MS });
    res.json({ auth_url: authUrl });
  });

  routes.delete("/integrations/cloud/drive", {
    summary: "Disconnect Google Drive: revoke the grant at Google and forget it",
    status: 204,
    returns: "Disconnected",
    errors: { 503: "No Google OAuth client is configured" },
  }, async (_input, _req, res) => {
    await drive.disconnect(actorOf(res));
    res.status(204).end();
  });

  routes.get("/data_sources/drive/picker_token", {
    summary: "A short-lived Google token for the browser's file picker",
    returns: "`{access_token, expires_at}`",
    errors: { 401: "Google refused the stored grant: reconnect Google Drive", 409: "Google Drive is not connected", 503: "No Google OAuth client is configured, or Google cannot be reached" },
  }, async (_input, _req, res) => {
    res.setHeader("Cache-Control", "no-store");
    res.json(presentPickerToken(await drive.pickerToken(actorOf(res))));
  });

  routes.post("/data_sources/drive", {
    summary: "Create a Google Drive source read with the caller's grant, with its auto-provisioned collection and pipeline",
    body: createDriveSourceBody,
    status: 201,
    returns: "`{data_source, drive_source, pipeline}`",
    errors: { 404: "No such group among the caller's", 409: "Google Drive is not connected", 503: "No Google OAuth client is configured" },
  }, async ({ body: { data_source } }, req, res) => {
    const created = await drive.createSource(actorOf(res), data_source.data_source_name, data_source.owner_group_id);
    await recordAction(audit, req, res, { action: "source.created", objectId: created.source.id, detail: created.source.kind });
    res.status(201).json(presentCreatedDriveSource(created));
  });

  routes.post("/data_sources/drive/:id/files", {
    summary: "Register Drive files with the source, each checked with Google",
    params: idParams,
    body: registerDriveFilesBody,
    returns: "`{data_source_id, added, files}`",
    errors: {
      400: "Not a Google Drive source",
      404: "No such data source among the caller's",
      409: "The source reads another user's Drive, or the grant is missing or refused: reconnect",
      422: "A file id is not a file this grant can read (trashed, a folder, or not shared)",
      503: "No Google OAuth client is configured, or Google cannot be reached",
    },
  }, async ({ params: { id }, body: { file_ids } }, _req, res) => {
    res.json(presentRegisteredFiles(await drive.registerFiles(actorOf(res), id, file_ids)));
  });

  routes.post("/data_sources/drive/:id/ingest_all", {
    summary: "Register every file the grant covers",
    params: idParams,
    returns: "`{data_source_id, added, files}`",
    errors: {
      400: "Not a Google Drive source",
      404: "No such data source among the caller's",
      409: "The grant covers no files; or the source reads another user's Drive, or the grant is missing or refused",
      503: "No Google OAuth client is configured, or Google cannot be reached",
    },
  }, async ({ params: { id } }, _req, res) => {
    res.json(presentRegisteredFiles(await drive.ingestAll(actorOf(res), id)));
  });

  return routes.router;
}
