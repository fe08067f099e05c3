import type { Router } from "express";
import type { AuditLog } from "../audit/audit";
import { requireAdministrator } from "../access/administrators";
import { actorOf } from "../routing/auth.middleware";
import { documentedRouter } from "../routing/documented-router";
import { presentAuditPage } from "./audit.presenters";
import { auditQuery } from "./audit.schemas";

export function auditRoutes(audit: AuditLog, adminEmails: readonly string[]): Router {
  const routes = documentedRouter("Audit");

  routes.get("/audit", {
    summary: "The audit trail, newest first (administrators)",
    query: auditQuery,
    returns: "`{events: [{at, action, actor, address, object_id, detail}], next}`; `next` (null on the last page) is the `before` of the next page",
    errors: { 403: "The caller is not an administrator (ADMIN_EMAILS)" },
  }, async ({ query }, _req, res) => {
    requireAdministrator(actorOf(res), adminEmails, "read the audit trail");
    res.json(presentAuditPage(await audit.page(query.limit, query.before ?? null)));
  });

  return routes.router;
}
