import { Router } from "express";
import type { PipelinesService } from "../pipelines/pipelines.service";
import { actorOf } from "./auth.middleware";
import { presentJob, presentPipeline } from "./pipelines.presenters";
import { idParams } from "./common.schemas";
import { createPipelineBody } from "./pipelines.schemas";
import { parse } from "./validate";

export function pipelinesRoutes(pipelines: PipelinesService): Router {
  const router = Router();

  router.post("/data_pipelines", async (req, res) => {
    const body = parse(createPipelineBody, req.body, "body");
    const pipeline = await pipelines.create(actorOf(res), {
      name: body.name,
      description: body.description,
      dataSourceId: body.data_source_id,
      collectionId: body.collection_id,
    });
    res.status(201).json(presentPipeline(pipeline));
  });

  router.get("/data_pipelines", async (_req, res) => {
    res.json((await pipelines.list(actorOf(res))).map(presentPipeline));
  });

  router.get("/data_pipelines/:id", async (req, res) => {
    const { id } = parse(idParams, req.params, "params");
    res.json(presentPipeline(await pipelines.get(actorOf(res), id)));
  });

  router.get("/data_pipelines/:id/jobs", async (req, res) => {
    const { id } = parse(idParams, req.params, "params");
    res.json((await pipelines.jobs(actorOf(res), id)).map(presentJob));
  });

  return router;
}
