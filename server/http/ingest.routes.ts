import type { Router } from "express";
import type { IngestService } from "../ingest/ingest.service";
import { actorOf } from "../routing/auth.middleware";
import { documentedRouter } from "../routing/documented-router";
import { presentJob } from "../routing/pipelines.presenters";
import { idParams } from "../routing/common.schemas";

const NO_JOBS_YET = "No ingestion jobs found for this pipeline";

export function ingestRoutes(ingest: IngestService): Router {
  const routes = documentedRouter("Pipelines");

  routes.post("/data_pipelines/:id/ingest", {
    summary: "Start an ingestion job; the work runs in the background, one job at a time",
    params: idParams,
    status: 202,
    returns: "The job record",
    errors: { 404: "No such pipeline, or its source or collection is no longer the caller's", 409: "A job is already running for this pipeline" },
  }, async ({ params: { id } }, _req, res) => {
    res.status(202).json(presentJob(await ingest.trigger(actorOf(res), id)));
  });

  routes.post("/data_pipelines/:id/ingest/cancel", {
    summary: "Cancel the pipeline's queued or running job: it ends `failed` with `Cancelled by <email>`; files indexed so far stay searchable",
    params: idParams,
    status: 202,
    returns: "The job record; a running job stops at its next file (poll the status), a queued one is already `failed`",
    errors: { 404: "No such pipeline, or its source or collection is no longer the caller's", 409: "No job is queued or running for this pipeline" },
  }, async ({ params: { id } }, _req, res) => {
    res.status(202).json(presentJob(await ingest.cancel(actorOf(res), id)));
  });

  routes.get("/data_pipelines/:id/ingest/status", {
    summary: "The newest ingestion job of the pipeline",
    params: idParams,
    returns: "The job record",
    // The contract lists this 202 with its errors: its body is a `{detail}` like theirs.
    errors: { 202: "The pipeline never ran: `{detail}`, which is not a job record", 404: "No such pipeline among the caller's" },
  }, async ({ params: { id } }, _req, res) => {
    const job = await ingest.latest(actorOf(res), id);
    // 202 with a detail, not a job record: the pipeline never ran (docs/decisions/0004-ingestion-job-contract.md).
    if (!job) res.status(202).json({ detail: NO_JOBS_YET });
    else res.json(presentJob(job));
  });

  return routes.router;
}
