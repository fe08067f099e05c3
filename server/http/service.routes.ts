import type { Router } from "express";
import { documentedRouter } from "./documented-router";
import type { OpenApiDocument } from "./openapi";

/** About the service itself, without authentication: health, and the API's description for LAN clients (nothing secret in it). */
export function serviceRoutes(openApi: () => OpenApiDocument): Router {
  const routes = documentedRouter("Service");

  routes.get("/health", { summary: "Whether the service is up", returns: '`{"status": "ok"}`', public: true }, (_req, res) => {
    res.json({ status: "ok" });
  });

  routes.get("/openapi.json", { summary: "This API description", returns: "The OpenAPI 3.1 document of the API", public: true }, (_req, res) => {
    res.json(openApi());
  });

  return routes.router;
}
