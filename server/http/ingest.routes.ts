import { Router } from "express";
import type { IngestService } from "../ingest/ingest.service";
import { actorOf } from "./auth.middleware";
import { presentJob } from "./pipelines.presenters";
import { idParams } from "./common.schemas";
import { parse } from "./validate";

export const NO_JOBS_YET = "No ingestion jobs found for this pipeline";

export function ingestRoutes(ingest: IngestService): Router {
  const router = Router();

  router.post("/data_pipelines/:id/ingest", async (req, res) => {
    const { id } = parse(idParams, req.params, "params");
    res.status(202).json(presentJob(await ingest.trigger(actorOf(res), id)));
  });

  router.get("/data_pipelines/:id/ingest/status", async (req, res) => {
    const { id } = parse(idParams, req.params, "params");
    const job = await ingest.latest(actorOf(res), id);
    // 202 with a detail, not a job record: the pipeline never ran (docs/decisions.md: Ingestion job).
    if (!job) res.status(202).json({ detail: NO_JOBS_YET });
    else res.json(presentJob(job));
  });

  return router;
}
