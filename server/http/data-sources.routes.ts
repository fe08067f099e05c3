import { Router } from "express";
import type { SourcesService } from "../sources/sources.service";
import { actorOf } from "./auth.middleware";
import { presentDataSource, presentSmbSource } from "./data-sources.presenters";
import { presentPipeline } from "./pipelines.presenters";
import { idParams } from "./common.schemas";
import { createSmbSourceBody, groupIdParams } from "./data-sources.schemas";
import { parse } from "./validate";

export function dataSourcesRoutes(sources: SourcesService): Router {
  const router = Router();

  router.post("/data_sources/smb/:group_id", async (req, res) => {
    const { group_id } = parse(groupIdParams, req.params, "params");
    const { data_source, smb_source } = parse(createSmbSourceBody, req.body, "body");
    const created = await sources.createSmb(actorOf(res), group_id, {
      name: data_source.data_source_name,
      password: smb_source.remote_smb_password,
      remoteSystemUsername: smb_source.remote_system_username,
      remoteSystemName: smb_source.remote_system_name,
      localSystemName: smb_source.local_system_name,
      defaultIp: smb_source.default_ip ?? null,
      port: smb_source.port,
    });
    res.status(201).json({
      data_source: presentDataSource(created.source),
      smb_source: presentSmbSource(created.smb!),
      pipeline: presentPipeline(created.pipeline),
    });
  });

  router.get("/data_sources", async (_req, res) => {
    const listed = await sources.list(actorOf(res));
    res.json(listed.map(({ source, smb }) => ({ ...presentDataSource(source), smb_source: smb ? presentSmbSource(smb) : null })));
  });

  router.get("/data_sources/smb/list/:id", async (req, res) => {
    const { id } = parse(idParams, req.params, "params");
    res.json({ shares: await sources.listSmbShares(actorOf(res), id) });
  });

  router.delete("/data_sources/:id", async (req, res) => {
    const { id } = parse(idParams, req.params, "params");
    await sources.delete(actorOf(res), id);
    res.status(204).end();
  });

  return router;
}
