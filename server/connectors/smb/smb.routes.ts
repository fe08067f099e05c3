import { Router } from "express";
import { actorOf } from "../../http/auth.middleware";
import { presentDataSource } from "../../http/data-sources.presenters";
import { presentPipeline } from "../../http/pipelines.presenters";
import { groupIdParams, idParams } from "../../http/common.schemas";
import { parse } from "../../http/validate";
import type { SmbSources } from "./smb-sources.service";
import { presentSmbSource } from "./smb.presenters";
import { createSmbSourceBody } from "./smb.schemas";
import { smbConnectLimiter } from "./smb-connect-limiter";

export function smbRoutes(smb: SmbSources): Router {
  const router = Router();
  // One count per user for both routes: each makes Sluice connect wherever the caller says.
  const connectAttempts = smbConnectLimiter();

  router.post("/data_sources/smb/:group_id", connectAttempts, async (req, res) => {
    const { group_id } = parse(groupIdParams, req.params, "params");
    const { data_source, smb_source } = parse(createSmbSourceBody, req.body, "body");
    const created = await smb.create(actorOf(res), group_id, {
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
      smb_source: presentSmbSource(created.details),
      pipeline: presentPipeline(created.pipeline),
    });
  });

  router.get("/data_sources/smb/list/:id", connectAttempts, async (req, res) => {
    const { id } = parse(idParams, req.params, "params");
    res.json({ shares: await smb.shareListing(actorOf(res), id) });
  });

  return router;
}
