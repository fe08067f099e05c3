import { Router } from "express";
import type { ModelsService } from "../llm/models.service";
import { actorOf } from "./auth.middleware";
import { presentLibraryEntry, presentModel, presentPersonalModel, presentPullEvent } from "./models.presenters";
import {
  addPersonalModelBody,
  librarySearchQuery,
  modelIdParams,
  personalRecordParams,
  pullModelBody,
  updatePersonalModelBody,
} from "./models.schemas";
import { openEventStream } from "./sse";
import { parse } from "./validate";

export function modelsRoutes(models: ModelsService): Router {
  const router = Router();

  // The fixed paths come before /models/:id.
  router.get("/models/library/search", (req, res) => {
    const query = parse(librarySearchQuery, req.query, "query");
    res.json(models.searchLibrary(query.q, query.top_k).map(presentLibraryEntry));
  });

  router.post("/models/library/refresh", async (_req, res) => {
    const refreshed = await models.refreshLibrary();
    res.json({ count: refreshed.count, refreshed_at: refreshed.refreshedAt.toISOString().replace(/Z$/, "") });
  });

  // An SSE stream; a caller who leaves only unsubscribes, the pull goes on for the others.
  router.post("/models", (req, res) => {
    const body = parse(pullModelBody, req.body, "body");
    actorOf(res);
    const pull = models.pull(body.model_name);
    const stream = openEventStream(req, res, models.options.keepAliveMs);
    const unsubscribe = pull.subscribe((event) => {
      stream.send(presentPullEvent(event));
      if (event.status === "completed" || event.status === "error") stream.end();
    });
    stream.onClose(unsubscribe);
  });

  router.get("/models", async (_req, res) => {
    res.json((await models.list()).map(presentModel));
  });

  router.get("/models/my", async (_req, res) => {
    res.json((await models.listMine(actorOf(res))).map(presentPersonalModel));
  });

  router.post("/models/my", async (req, res) => {
    const body = parse(addPersonalModelBody, req.body, "body");
    res.status(201).json(presentPersonalModel(await models.addMine(actorOf(res), body.model_name, body.hardware_notes)));
  });

  router.put("/models/my", async (req, res) => {
    const body = parse(updatePersonalModelBody, req.body, "body");
    res.json(presentPersonalModel(await models.updateMine(actorOf(res), body.model_name, body.hardware_notes)));
  });

  router.delete("/models/my/:record_id", async (req, res) => {
    const { record_id } = parse(personalRecordParams, req.params, "params");
    await models.deleteMine(actorOf(res), record_id);
    res.status(204).end();
  });

  router.delete("/models/:id", async (req, res) => {
    const { id } = parse(modelIdParams, req.params, "params");
    await models.delete(id);
    res.status(204).end();
  });

  router.get("/users/my/models", async (_req, res) => {
    res.json((await models.listMine(actorOf(res))).map(presentPersonalModel));
  });

  return router;
}
