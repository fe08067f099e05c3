import type { Router } from "express";
import type { ApiKeysService } from "../accounts/api-keys.service";
import type { AuditLog } from "../audit/audit";
import { ForbiddenError } from "../errors";
import { actorOf, clientAddress } from "../routing/auth.middleware";
import { idParams } from "../routing/common.schemas";
import { documentedRouter } from "../routing/documented-router";
import { presentApiKey, presentCreatedApiKey } from "./api-keys.presenters";
import { createApiKeyBody } from "./api-keys.schemas";

export function apiKeysRoutes(apiKeys: ApiKeysService, audit: AuditLog): Router {
  const routes = documentedRouter("API keys");

  routes.post("/users/me/api_keys", {
    summary: "Make an API key: a bearer token with the caller's rights, shown this once",
    body: createApiKeyBody,
    status: 201,
    returns: "`{id, name, key}`; only the key's hash is kept, so it cannot be shown again",
    errors: { 403: "Called with an API key: keys are made from a signed-in session" },
  }, async ({ body }, req, res) => {
    const actor = actorOf(res);
    // A leaked key must not be able to make more keys that outlive its revocation.
    if (actor.apiKeyId) throw new ForbiddenError("An API key cannot make API keys; sign in with the password");
    const { apiKey, key } = await apiKeys.create(actor, body.name);
    await audit.record({ action: "api_key.created", actorId: actor.userId, actorEmail: actor.email, address: clientAddress(req), objectId: apiKey.id, detail: apiKey.name });
    res.status(201).json(presentCreatedApiKey(apiKey, key));
  });

  routes.get("/users/me/api_keys", { summary: "The caller's API keys", returns: "`[{id, name, created_at, last_used_at}]`, never the key" }, async (_input, _req, res) => {
    res.json((await apiKeys.list(actorOf(res))).map(presentApiKey));
  });

  routes.delete("/users/me/api_keys/:id", {
    summary: "Revoke one of the caller's API keys",
    params: idParams,
    status: 204,
    returns: "Revoked: the key is refused from now on",
    errors: { 404: "No such key among the caller's" },
  }, async ({ params: { id } }, req, res) => {
    const actor = actorOf(res);
    const apiKey = await apiKeys.revoke(actor, id);
    await audit.record({ action: "api_key.revoked", actorId: actor.userId, actorEmail: actor.email, address: clientAddress(req), objectId: apiKey.id, detail: apiKey.name });
    res.status(204).end();
  });

  return routes.router;
}
