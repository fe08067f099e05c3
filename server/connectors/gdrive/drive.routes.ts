import { Router, type Response } from "express";
import { actorOf } from "../../http/auth.middleware";
import { presentDataSource } from "../../http/data-sources.presenters";
import { presentPipeline } from "../../http/pipelines.presenters";
import { idParams } from "../../http/common.schemas";
import { parse } from "../../http/validate";
import { CALLBACK_PATH, ForeignBrowserError, type DriveService } from "./drive.service";
import { STATE_LIFETIME_MS } from "./oauth-states";
import { presentDriveFile, presentDriveSource, presentDriveStatus, presentPickerToken } from "./drive.presenters";
import { connectDriveQuery, createDriveSourceBody, driveCallbackQuery, registerDriveFilesBody } from "./drive.schemas";

/**
 * The one-time cookie that binds a consent to the browser that asked for it: set by connect,
 * sent back only to the callback (its path), with SameSite=Lax so Google's top-level redirect
 * back carries it.
 */
export const BROWSER_KEY_COOKIE = "sluice_drive_consent";

function cookieOptions(secure: boolean) {
  return { httpOnly: true, sameSite: "lax" as const, secure, path: CALLBACK_PATH };
}

/**
 * The browser's return from Google's consent page. Public (mounted before requireAuth): it
 * carries no bearer token; the user comes from the sealed state, and the binding cookie shows
 * this is the browser that started.
 */
export function driveCallbackRoutes(drive: DriveService, secureCookie: boolean): Router {
  const router = Router();
  router.get("/integrations/cloud/drive/callback", async (req, res) => {
    const query = parse(driveCallbackQuery, req.query, "query");
    res.setHeader("Cache-Control", "no-store");
    const browserKey = (req.cookies as Record<string, string> | undefined)?.[BROWSER_KEY_COOKIE];
    let location: string;
    try {
      location = await drive.callback(query, { browserKey, peer: req.socket.remoteAddress });
    } catch (error) {
      if (error instanceof ForeignBrowserError) return refuseForeignBrowser(res, error);
      throw error;
    }
    res.clearCookie(BROWSER_KEY_COOKIE, cookieOptions(secureCookie));
    res.redirect(302, location);
  });
  return router;
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
export function driveRoutes(drive: DriveService, secureCookie: boolean): Router {
  const router = Router();

  router.get("/integrations/cloud/drive", async (_req, res) => {
    res.json(presentDriveStatus(await drive.status(actorOf(res))));
  });

  router.post("/integrations/cloud/drive/connect", async (req, res) => {
    const { return_to } = parse(connectDriveQuery, req.query, "query");
    const { authUrl, browserKey } = await drive.connect(actorOf(res), return_to, req.socket.remoteAddress);
    res.cookie(BROWSER_KEY_COOKIE, browserKey, { ...cookieOptions(secureCookie), maxAge: STATE_LIFETIME_MS });
    res.json({ auth_url: authUrl });
  });

  router.delete("/integrations/cloud/drive", async (_req, res) => {
    await drive.disconnect(actorOf(res));
    res.status(204).end();
  });

  router.get("/data_sources/drive/picker_token", async (_req, res) => {
    res.setHeader("Cache-Control", "no-store");
    res.json(presentPickerToken(await drive.pickerToken(actorOf(res))));
  });

  router.post("/data_sources/drive", async (req, res) => {
    const { data_source } = parse(createDriveSourceBody, req.body, "body");
    const created = await drive.createSource(actorOf(res), data_source.data_source_name, data_source.owner_group_id);
    res.status(201).json({
      data_source: presentDataSource(created.source),
      drive_source: presentDriveSource(created.details, []),
      pipeline: presentPipeline(created.pipeline),
    });
  });

  router.post("/data_sources/drive/:id/files", async (req, res) => {
    const { id } = parse(idParams, req.params, "params");
    const { file_ids } = parse(registerDriveFilesBody, req.body, "body");
    const result = await drive.registerFiles(actorOf(res), id, file_ids);
    res.json({ data_source_id: result.sourceId, added: result.added, files: result.files.map(presentDriveFile) });
  });

  router.post("/data_sources/drive/:id/ingest_all", async (req, res) => {
    const { id } = parse(idParams, req.params, "params");
    const result = await drive.ingestAll(actorOf(res), id);
    res.json({ data_source_id: result.sourceId, added: result.added, files: result.files.map(presentDriveFile) });
  });

  return router;
}
