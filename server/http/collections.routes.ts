import { Router } from "express";
import type { CollectionsService } from "../collections/collections.service";
import { actorOf } from "./auth.middleware";
import { presentCollection, presentDocumentPage, presentSearchResults } from "./collections.presenters";
import { createCollectionBody, pageQuery, searchQuery } from "./collections.schemas";
import { idParams } from "./common.schemas";
import { parse } from "./validate";

export function collectionsRoutes(collections: CollectionsService): Router {
  const router = Router();

  router.post("/collections", async (req, res) => {
    const body = parse(createCollectionBody, req.body, "body");
    res.status(201).json(presentCollection(await collections.create(actorOf(res), body.name, body.owner_group_id)));
  });

  router.get("/collections", async (_req, res) => {
    const listed = await collections.list(actorOf(res));
    res.json(listed.map(({ collection, stats }) => presentCollection(collection, stats)));
  });

  router.get("/collections/:id/search", async (req, res) => {
    const { id } = parse(idParams, req.params, "params");
    const { q, top_k } = parse(searchQuery, req.query, "query");
    res.json(presentSearchResults(await collections.search(actorOf(res), id, q, top_k)));
  });

  router.get("/collections/:id/documents", async (req, res) => {
    const { id } = parse(idParams, req.params, "params");
    const { offset, limit } = parse(pageQuery, req.query, "query");
    res.json(presentDocumentPage(await collections.documents(actorOf(res), id, offset, limit), offset, limit));
  });

  router.delete("/collections/:id", async (req, res) => {
    const { id } = parse(idParams, req.params, "params");
    await collections.delete(actorOf(res), id);
    res.status(204).end();
  });

  return router;
}
