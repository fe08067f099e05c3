import type { Router } from "express";
import type { SourcesService } from "../sources/sources.service";
import type { SchedulesService } from "../schedules/schedules.service";
import { actorOf } from "../routing/auth.middleware";
import { documentedRouter } from "../routing/documented-router";
import { presentListedSource, presentSchedulesChanged } from "../routing/data-sources.presenters";
import { idParams } from "../routing/common.schemas";
import type { AuditLog } from "../audit/audit";
import { recordAction } from "../routing/audit-event";

/** The routes every kind shares; each kind's own routes (creation, ...) come from its folder under connectors/. */
export function dataSourcesRoutes(sources: SourcesService, schedules: SchedulesService, audit: AuditLog): Router {
  const routes = documentedRouter("Data sources");

  routes.get("/data_sources", { summary: "The data sources the caller can reach, of every kind", returns: "A list of data sources with their kind's details" }, async (_input, _req, res) => {
    const listed = await sources.list(actorOf(res));
    res.json(listed.map(({ source, details }) => presentListedSource(source, details)));
  });

  routes.delete("/data_sources/:id", {
    summary: "Delete a data source, its pipelines and, unless another pipeline fills it, its auto-provisioned collection",
    params: idParams,
    status: 204,
    returns: "Deleted",
    errors: { 404: "No such data source among the caller's", 409: "An ingestion job from it is queued or running" },
  }, async ({ params: { id } }, req, res) => {
    await sources.delete(actorOf(res), id);
    await recordAction(audit, req, res, { action: "source.deleted", objectId: id });
    res.status(204).end();
  });

  for (const action of ["pause", "resume"] as const) {
    routes.post(`/data_sources/:id/schedules/${action}`, {
      summary:
        action === "pause"
          ? "Pause the schedule of every pipeline reading from this source (its server is down for maintenance)"
          : "Resume the paused schedules of every pipeline reading from this source",
      params: idParams,
      returns: `\`{data_source_id, schedules_changed}\`: how many schedules were ${action === "pause" ? "paused" : "resumed"}`,
      errors: { 404: "No such data source among the caller's" },
    }, async ({ params: { id } }, _req, res) => {
      const changed = await schedules.setPausedForSource(actorOf(res), id, action === "pause");
      res.json(presentSchedulesChanged(id, changed));
    });
  }

  return routes.router;
}
