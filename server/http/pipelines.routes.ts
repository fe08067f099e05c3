import type { Router } from "express";
import type { z } from "zod";
import type { PipelinesService } from "../pipelines/pipelines.service";
import type { ScheduleChange, SchedulesService } from "../schedules/schedules.service";
import { actorOf } from "../routing/auth.middleware";
import { documentedRouter } from "../routing/documented-router";
import { presentJob, presentPipeline, presentPipelineView } from "../routing/pipelines.presenters";
import { idParams } from "../routing/common.schemas";
import { createPipelineBody, setScheduleBody } from "./pipelines.schemas";

export function pipelinesRoutes(pipelines: PipelinesService, schedules: SchedulesService): Router {
  const routes = documentedRouter("Pipelines");

  routes.post("/data_pipelines", {
    summary: "Join a data source to a collection",
    body: createPipelineBody,
    status: 201,
    returns: "The pipeline, status `inactive`",
    errors: { 400: "A pipeline already joins this source and collection", 404: "The source or the collection is not among the caller's" },
  }, async ({ body }, _req, res) => {
    const pipeline = await pipelines.create(actorOf(res), {
      name: body.name,
      description: body.description,
      dataSourceId: body.data_source_id,
      collectionId: body.collection_id,
    });
    res.status(201).json(presentPipeline(pipeline));
  });

  routes.get("/data_pipelines", { summary: "The pipelines the caller can reach", returns: "A list of pipelines" }, async (_input, _req, res) => {
    res.json((await pipelines.list(actorOf(res))).map(presentPipelineView));
  });

  routes.get("/data_pipelines/:id", {
    summary: "One pipeline",
    params: idParams,
    returns: "The pipeline",
    errors: { 404: "No such pipeline among the caller's" },
  }, async ({ params: { id } }, _req, res) => {
    res.json(presentPipelineView(await pipelines.get(actorOf(res), id)));
  });

  routes.put("/data_pipelines/:id/schedule", {
    summary: "Set, replace, pause or resume the pipeline's schedule",
    params: idParams,
    body: setScheduleBody,
    returns: "The pipeline with its `schedule`; no run is started by this",
    errors: {
      400: "The cron pattern or the time zone is not valid (the detail says which field and why)",
      404: "No such pipeline among the caller's",
      409: "`paused` alone on a pipeline that has no schedule",
    },
  }, async ({ params: { id }, body }, _req, res) => {
    res.json(presentPipelineView(await schedules.set(actorOf(res), id, scheduleChange(body))));
  });

  routes.delete("/data_pipelines/:id/schedule", {
    summary: "Remove the pipeline's schedule",
    params: idParams,
    returns: "The pipeline, `schedule: null`",
    errors: { 404: "No such pipeline among the caller's" },
  }, async ({ params: { id } }, _req, res) => {
    res.json(presentPipelineView(await schedules.remove(actorOf(res), id)));
  });

  routes.get("/data_pipelines/:id/jobs", {
    summary: "The pipeline's ingestion jobs",
    params: idParams,
    returns: "A list of job records",
    errors: { 404: "No such pipeline among the caller's" },
  }, async ({ params: { id } }, _req, res) => {
    res.json((await pipelines.jobs(actorOf(res), id)).map(presentJob));
  });

  return routes.router;
}

/** The wire body (checked by setScheduleBody) as the service's change. */
function scheduleChange(body: z.infer<typeof setScheduleBody>): ScheduleChange {
  const extra = { ...(body.timezone !== undefined ? { timezone: body.timezone } : {}), ...(body.paused !== undefined ? { paused: body.paused } : {}) };
  if (body.every_minutes !== undefined) return { everyMinutes: body.every_minutes, ...extra };
  if (body.cron !== undefined) return { cron: body.cron, ...extra };
  return { paused: body.paused! };
}
