import type { Router } from "express";
import type { PipelinesService } from "../pipelines/pipelines.service";
import { actorOf } from "./auth.middleware";
import { documentedRouter } from "./documented-router";
import { presentJob, presentPipeline } from "./pipelines.presenters";
import { idParams } from "./common.schemas";
import { createPipelineBody } from "./pipelines.schemas";
import { parse } from "./validate";

export function pipelinesRoutes(pipelines: PipelinesService): Router {
  const routes = documentedRouter("Pipelines");

  routes.post("/data_pipelines", {
    summary: "Join a data source to a collection",
    body: createPipelineBody,
    status: 201,
    returns: "The pipeline, status `inactive`",
    errors: { 400: "A pipeline already joins this source and collection", 404: "The source or the collection is not among the caller's" },
  }, async (req, res) => {
    const body = parse(createPipelineBody, req.body, "body");
    const pipeline = await pipelines.create(actorOf(res), {
      name: body.name,
      description: body.description,
      dataSourceId: body.data_source_id,
      collectionId: body.collection_id,
    });
    res.status(201).json(presentPipeline(pipeline));
  });

  routes.get("/data_pipelines", { summary: "The pipelines the caller can reach", returns: "A list of pipelines" }, async (_req, res) => {
    res.json((await pipelines.list(actorOf(res))).map(presentPipeline));
  });

  routes.get("/data_pipelines/:id", {
    summary: "One pipeline",
    params: idParams,
    returns: "The pipeline",
    errors: { 404: "No such pipeline among the caller's" },
  }, async (req, res) => {
    const { id } = parse(idParams, req.params, "params");
    res.json(presentPipeline(await pipelines.get(actorOf(res), id)));
  });

  routes.get("/data_pipelines/:id/jobs", {
    summary: "The pipeline's ingestion jobs",
    params: idParams,
    returns: "A list of job records",
    errors: { 404: "No such pipeline among the caller's" },
  }, async (req, res) => {
    const { id } = parse(idParams, req.params, "params");
    res.json((await pipelines.jobs(actorOf(res), id)).map(presentJob));
  });

  return routes.router;
}
