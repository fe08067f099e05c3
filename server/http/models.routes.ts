import type { Router } from "express";
import type { ModelsService } from "../llm/models.service";
import { actorOf } from "../routing/auth.middleware";
import { documentedRouter } from "../routing/documented-router";
import { presentCancelledPull, presentLibraryEntry, presentLibraryRefresh, presentModel, presentModelServerStatus, presentPersonalModel, presentPullEvent } from "./models.presenters";
import {
  addPersonalModelBody,
  cancelPullBody,
  librarySearchQuery,
  modelIdParams,
  personalRecordParams,
  pullModelBody,
  updatePersonalModelBody,
} from "./models.schemas";
import { isFinalEvent, RunningPull } from "../llm/model-pulls";
import { openEventStream } from "./sse";
import type { InstanceRoles } from "../access/instance-roles";
import type { AuditLog } from "../audit/audit";
import { recordAction } from "../routing/audit-event";

/** The 403 of the instance-wide model actions. */
const ADMIN_ONLY = "On a LAN server or with ADMIN_EMAILS set, only an administrator may";

export function modelsRoutes(models: ModelsService, roles: InstanceRoles, audit: AuditLog): Router {
  const routes = documentedRouter("Models");

  // The fixed paths come before /models/:id.
  routes.get("/models/library/search", {
    summary: "Fuzzy, typo-tolerant search in the public model library",
    query: librarySearchQuery,
    returns: "The best matches: name, description, capabilities, sizes, popularity",
  }, ({ query }, _req, res) => {
    res.json(models.searchLibrary(query.q, query.top_k).map(presentLibraryEntry));
  });

  routes.post("/models/library/refresh", {
    summary: "Reload the model library from MODEL_LIBRARY_URL",
    returns: "`{count, refreshed_at}`",
    errors: { 403: ADMIN_ONLY, 502: "The library there is not a valid catalog", 503: "No MODEL_LIBRARY_URL is configured, or it could not be fetched" },
  }, async (_input, _req, res) => {
    await roles.requireInstanceAction(actorOf(res), "refresh the model library");
    res.json(presentLibraryRefresh(await models.refreshLibrary()));
  });

  routes.get("/models/server", {
    summary: "Whether the model server (Ollama) answers, and its version",
    returns: "`{reachable, version, on_this_machine}`; on_this_machine: the model server runs on the Sluice server's own machine",
  }, async (_input, _req, res) => {
    res.json(presentModelServerStatus(await models.serverStatus()));
  });

  // An SSE stream; a caller who leaves only unsubscribes, the pull goes on for the others (and for them, until they cancel).
  routes.post("/models", {
    summary: "Pull a model into the catalog and benchmark it; callers pulling the same model share one download",
    body: pullModelBody,
    sse: true,
    returns:
      "Events with a `status`: `pulling <layer>` (completed, total bytes of the layer; completed_bytes, total_bytes of the whole download), `benchmarking`, then `completed` with the catalog record, `cancelled`, or `error`. " +
      "A model already in the catalog answers one `completed` event with `already_present: true` and downloads nothing, unless `update` is true",
    errors: {
      400: "The name carries a registry host (`host[:port]/namespace/model`) that is not in `OLLAMA_REGISTRIES`; nothing was pulled",
      403: ADMIN_ONLY,
    },
  }, async ({ body }, req, res) => {
    const actor = actorOf(res);
    await roles.requireInstanceAction(actor, "pull models");
    const pull = await models.pull(actor, body.model_name, body.update);
    // Recorded once the pull is accepted (a refusal above records nothing), not at its end: the
    // stream answers before the download ends. A model in the catalog already names its record.
    await recordAction(audit, req, res, { action: "model.pull_requested", objectId: pull instanceof RunningPull ? null : pull.id, detail: body.model_name });
    const stream = openEventStream(req, res, models.options.keepAliveMs);
    if (!(pull instanceof RunningPull)) {
      stream.send(presentPullEvent({ status: "completed", already_present: true, model: pull }));
      return stream.end();
    }
    const unsubscribe = pull.subscribe((event) => {
      stream.send(presentPullEvent(event));
      if (isFinalEvent(event)) stream.end();
    }, actor.userId);
    stream.onClose(unsubscribe);
  });

  routes.post("/models/cancel", {
    summary: "Cancel the caller's pull of a model: their streams end with `cancelled`; the download stops unless someone else is waiting for it",
    body: cancelPullBody,
    returns: "`{model_name, download_stopped}`",
    errors: { 404: "The caller has no pull of that model under way" },
  }, async ({ body }, _req, res) => {
    res.json(presentCancelledPull(await models.cancel(actorOf(res), body.model_name)));
  });

  routes.get("/models", { summary: "The model catalog", returns: "A list of catalog records with benchmark figures" }, async (_input, _req, res) => {
    res.json((await models.list()).map(presentModel));
  });

  routes.get("/models/my", { summary: "The caller's personal list of models", returns: "A list of personal records" }, async (_input, _req, res) => {
    res.json((await models.listMine(actorOf(res))).map(presentPersonalModel));
  });

  routes.post("/models/my", {
    summary: "Add a catalog model to the caller's personal list",
    body: addPersonalModelBody,
    status: 201,
    returns: "The personal record",
    errors: { 404: "The model is not in the catalog; pull it first", 409: "The model is already in the list" },
  }, async ({ body }, _req, res) => {
    res.status(201).json(presentPersonalModel(await models.addMine(actorOf(res), body.model_name, body.hardware_notes)));
  });

  routes.put("/models/my", {
    summary: "Change the hardware notes of a model in the caller's list",
    body: updatePersonalModelBody,
    returns: "The personal record",
    errors: { 404: "The model is not in the catalog, or not in the caller's list" },
  }, async ({ body }, _req, res) => {
    res.json(presentPersonalModel(await models.updateMine(actorOf(res), body.model_name, body.hardware_notes)));
  });

  routes.delete("/models/my/:record_id", {
    summary: "Remove a record from the caller's list",
    params: personalRecordParams,
    status: 204,
    returns: "Removed",
    errors: { 404: "No such record in the caller's list" },
  }, async ({ params: { record_id } }, _req, res) => {
    await models.deleteMine(actorOf(res), record_id);
    res.status(204).end();
  });

  routes.delete("/models/:id", {
    summary: "Remove a model for everyone: catalog, personal lists and the model server",
    params: modelIdParams,
    status: 204,
    returns: "Removed",
    errors: { 403: ADMIN_ONLY, 404: "No such model", 502: "The model server refused to remove it", 503: "The model server cannot be reached; nothing was removed" },
  }, async ({ params: { id } }, req, res) => {
    await roles.requireInstanceAction(actorOf(res), "delete catalog models");
    await models.delete(id);
    await recordAction(audit, req, res, { action: "model.deleted", objectId: id });
    res.status(204).end();
  });

  routes.get("/users/my/models", { summary: "The caller's personal list of models (as GET /models/my)", returns: "A list of personal records" }, async (_input, _req, res) => {
    res.json((await models.listMine(actorOf(res))).map(presentPersonalModel));
  });

  return routes.router;
}
