import { Router } from "express";
import { actorOf } from "../../http/auth.middleware";
import { presentDataSource } from "../../http/data-sources.presenters";
import { presentPipeline } from "../../http/pipelines.presenters";
import { groupIdParams } from "../../http/common.schemas";
import { parse } from "../../http/validate";
import type { FolderSources } from "./folder-sources.service";
import { presentFolderSource, presentFolderStatus } from "./folder.presenters";
import { createFolderSourceBody } from "./folder.schemas";

export function folderRoutes(folders: FolderSources): Router {
  const router = Router();

  router.get("/data_sources/folder", (_req, res) => {
    res.json(presentFolderStatus(folders.roots));
  });

  router.post("/data_sources/folder/:group_id", async (req, res) => {
    const { group_id } = parse(groupIdParams, req.params, "params");
    const { data_source, folder_source } = parse(createFolderSourceBody, req.body, "body");
    const created = await folders.create(actorOf(res), group_id, { name: data_source.data_source_name, path: folder_source.path });
    res.status(201).json({
      data_source: presentDataSource(created.source),
      folder_source: presentFolderSource(created.details),
      pipeline: presentPipeline(created.pipeline),
    });
  });

  return router;
}
