import { Router } from "express";
import type { SourcesService } from "../sources/sources.service";
import { actorOf } from "./auth.middleware";
import { presentListedSource } from "./data-sources.presenters";
import { idParams } from "./common.schemas";
import { parse } from "./validate";

/** The routes every kind shares; each kind's own routes (creation, ...) come from its folder under connectors/. */
export function dataSourcesRoutes(sources: SourcesService): Router {
  const router = Router();

  router.get("/data_sources", async (_req, res) => {
    const listed = await sources.list(actorOf(res));
    res.json(listed.map(({ source, details }) => presentListedSource(source, details)));
  });

  router.delete("/data_sources/:id", async (req, res) => {
    const { id } = parse(idParams, req.params, "params");
    await sources.delete(actorOf(res), id);
    res.status(204).end();
  });

  return router;
}
