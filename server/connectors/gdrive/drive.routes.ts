import { Router } from "express";
import { actorOf } from "../../http/auth.middleware";
import { presentDataSource } from "../../http/data-sources.presenters";
import { presentPipeline } from "../../http/pipelines.presenters";
import { idParams } from "../../http/common.schemas";
import { parse } from "../../http/validate";
import type { DriveService } from "./drive.service";
import { presentDriveFile, presentDriveSource, presentDriveStatus, presentPickerToken } from "./drive.presenters";
import { connectDriveQuery, createDriveSourceBody, driveCallbackQuery, registerDriveFilesBody } from "./drive.schemas";

/**
 * The browser's return from Google's consent page. Public (mounted before requireAuth): it
 * carries no bearer token; the user comes from the single-use state.
 */
export function driveCallbackRoutes(drive: DriveService): Router {
  const router = Router();
  router.get("/integrations/cloud/drive/callback", async (req, res) => {
    const query = parse(driveCallbackQuery, req.query, "query");
    res.setHeader("Cache-Control", "no-store");
    res.redirect(302, await drive.callback(query));
  });
  return router;
}

/** The signed-in Drive endpoints: connection and drive data sources. */
export function driveRoutes(drive: DriveService): Router {
  const router = Router();

  router.get("/integrations/cloud/drive", async (_req, res) => {
    res.json(presentDriveStatus(await drive.status(actorOf(res))));
  });

  router.post("/integrations/cloud/drive/connect", (req, res) => {
    const { return_to } = parse(connectDriveQuery, req.query, "query");
    res.json({ auth_url: drive.connect(actorOf(res), return_to) });
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
