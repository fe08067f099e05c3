import type { Router } from "express";
import type { CollectionsService } from "../collections/collections.service";
import { actorOf } from "../routing/auth.middleware";
import { documentedRouter } from "../routing/documented-router";
import { presentCollection, presentCollectionWithJobs, presentDocumentPage, presentSearchResults } from "./collections.presenters";
import { createCollectionBody, embeddingBody, pageQuery, searchQuery } from "./collections.schemas";
import { idParams } from "../routing/common.schemas";
import type { AuditLog } from "../audit/audit";
import { recordAction } from "../routing/audit-event";

export function collectionsRoutes(collections: CollectionsService, audit: AuditLog): Router {
  const routes = documentedRouter("Collections");

  routes.post("/collections", {
    summary: "Create a collection in one of the caller's groups",
    body: createCollectionBody,
    status: 201,
    returns: "The collection",
    errors: { 400: "The owner group does not exist, or the name is taken", 403: "The caller is not a member of the owner group" },
  }, async ({ body }, req, res) => {
    const collection = await collections.create(actorOf(res), body.name, body.owner_group_id);
    await recordAction(audit, req, res, { action: "collection.created", objectId: collection.id });
    res.status(201).json(presentCollection(collection));
  });

  routes.get("/collections", { summary: "The collections the caller can reach", returns: "A list of collections with their counts (`document_count`: the documents the caller may read) and `file_server_permissions`: `[{server}]`, one per file server whose permissions decide what the caller sees (SMB sources with `source_permissions`)" }, async (_input, _req, res) => {
    const listed = await collections.list(actorOf(res));
    res.json(listed.map(({ collection, stats, fileServers }) => presentCollection(collection, stats, fileServers)));
  });

  routes.get("/collections/:id/search", {
    summary: "Search in a collection: by words (keyword, BM25), by meaning (semantic) or both fused (hybrid)",
    params: idParams,
    query: searchQuery,
    returns:
      "`mode`: the mode that answered; `results`: the best chunks, best first (every word as typed before matches by stem), each with its document's `location` ({path, url}, null when unknown) and where it is in the document: `page`, `location_label` (\"page 7\", \"slide 3\", \"sheet Budget\"), `from_scan`; " +
      "`matched`: `all`, or `any` when no chunk had every word and the results are for any of them; `documents` with group_by=document: top_k documents with their best passages",
    errors: { 400: "semantic or hybrid mode on a collection without an embedding model", 404: "No such collection among the caller's", 503: "The model server could not embed the query" },
  }, async ({ params: { id }, query: { q, top_k, group_by, type, folder, mode } }, _req, res) => {
    const search = await collections.search(actorOf(res), id, { q, topK: top_k, groupBy: group_by, filter: { types: type, folder: folder || undefined }, mode });
    res.json(presentSearchResults(search));
  });

  routes.put("/collections/:id/embedding", {
    summary: "Set or clear (null) the collection's embedding model for hybrid retrieval; documents already there are embedded by ingestion jobs",
    params: idParams,
    body: embeddingBody,
    returns: "The collection, and the ids of the jobs that embed its documents",
    errors: {
      400: "The model is not in the catalog, or the model server cannot embed with it",
      404: "No such collection among the caller's",
      503: "The model server cannot be reached",
    },
  }, async ({ params: { id }, body }, _req, res) => {
    const { collection, jobIds } = await collections.setEmbeddingModel(actorOf(res), id, body.model);
    const fileServers = (await collections.fileServers([collection.id])).get(collection.id) ?? [];
    res.json(presentCollectionWithJobs(collection, await collections.readableStats(actorOf(res), collection.id), fileServers, jobIds));
  });

  routes.get("/collections/:id/documents", {
    summary: "One page of the documents in a collection",
    params: idParams,
    query: pageQuery,
    returns: "The page, with the total count",
    errors: { 404: "No such collection among the caller's" },
  }, async ({ params: { id }, query: { offset, limit } }, _req, res) => {
    res.json(presentDocumentPage(await collections.documents(actorOf(res), id, offset, limit), offset, limit));
  });

  routes.delete("/collections/:id", {
    summary: "Delete a collection, its pipelines and its indexed content",
    params: idParams,
    status: 204,
    returns: "Deleted",
    errors: { 404: "No such collection among the caller's", 409: "An ingestion job into it is queued or running" },
  }, async ({ params: { id } }, req, res) => {
    await collections.delete(actorOf(res), id);
    await recordAction(audit, req, res, { action: "collection.deleted", objectId: id });
    res.status(204).end();
  });

  return routes.router;
}
