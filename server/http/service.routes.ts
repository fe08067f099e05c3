import type { Router } from "express";
import { documentedRouter } from "../routing/documented-router";
import type { OpenApiDocument } from "./openapi";
import { diskHealth } from "../disk/disk-space";

/** About the service itself, without authentication: health, and the API's description for LAN clients (nothing secret in it). */
export function serviceRoutes(openApi: () => OpenApiDocument, dataDir: string): Router {
  const routes = documentedRouter("Service");

  routes.get(
    "/health",
    { summary: "Whether the service is up, and the free space in DATA_DIR", returns: '`{"status": "ok", "disk": {"free_bytes", "total_bytes", "low"}}`', public: true },
    async (_input, _req, res) => {
      // status first, as the runtime contract has it; the rest are additions beside it.
      res.json({ status: "ok", ...(await diskHealth(dataDir)) });
    },
  );

  routes.get("/openapi.json", { summary: "This API description", returns: "The OpenAPI 3.1 document of the API", public: true }, (_input, _req, res) => {
    res.json(openApi());
  });

  return routes.router;
}
