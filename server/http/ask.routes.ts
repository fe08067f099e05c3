import type { Router } from "express";
import type { AskService } from "../ask/ask.service";
import { actorOf } from "../routing/auth.middleware";
import { presentConversation, presentConversationWithTurns } from "./ask.presenters";
import { askBody } from "./ask.schemas";
import { idParams } from "../routing/common.schemas";
import { documentedRouter } from "../routing/documented-router";
import { openEventStream } from "./sse";

export function askRoutes(ask: AskService, keepAliveMs: number): Router {
  const routes = documentedRouter("Ask");

  // Every check that can be a 4xx runs before the stream opens; afterwards a failure is an `error` event.
  routes.post("/collections/:id/ask", {
    summary: "Ask a question of a collection: an answer from the collection's passages, written by a catalog model, with numbered citations",
    params: idParams,
    body: askBody,
    sse: true,
    returns: "Events with a `status`: `sources` (the numbered passages, each with `page`, `location_label` and `from_scan`), `answering` (a `delta` of the answer) repeated, then `completed` (answer, citations, conversation_id, model, eval_count, tokens_per_second), or `error` with a `detail`",
    errors: { 400: "The model is not in the catalog", 404: "No such collection among the caller's, or no such conversation of the caller's in it" },
  }, async ({ params: { id }, body }, req, res) => {
    const actor = actorOf(res);
    const prepared = await ask.prepare(actor, id, body);
    const stream = openEventStream(req, res, keepAliveMs);
    const upstream = new AbortController();
    // The client left: the model server stops writing an answer nobody reads.
    stream.onClose(() => upstream.abort());
    await ask.run(actor, prepared, (event) => stream.send(event), upstream.signal);
    stream.end();
  });

  routes.get("/collections/:id/conversations", {
    summary: "The caller's own conversations with a collection, newest first",
    params: idParams,
    returns: "A list of conversations (id, title, created_at, updated_at)",
    errors: { 404: "No such collection among the caller's" },
  }, async ({ params: { id } }, _req, res) => {
    res.json((await ask.listConversations(actorOf(res), id)).map(presentConversation));
  });

  routes.get("/conversations/:id", {
    summary: "One of the caller's conversations with its turns and each turn's sources",
    params: idParams,
    returns: "The conversation with `turns` (question, answer, model, sources, citations, created_at), oldest first",
    errors: { 404: "No such conversation of the caller's" },
  }, async ({ params: { id } }, _req, res) => {
    const { conversation, turns } = await ask.conversation(actorOf(res), id);
    res.json(presentConversationWithTurns(conversation, turns));
  });

  routes.delete("/conversations/:id", {
    summary: "Delete one of the caller's conversations",
    params: idParams,
    status: 204,
    returns: "Deleted",
    errors: { 404: "No such conversation of the caller's" },
  }, async ({ params: { id } }, _req, res) => {
    await ask.deleteConversation(actorOf(res), id);
    res.status(204).end();
  });

  return routes.router;
}
