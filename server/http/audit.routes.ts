import type { Router } from "express";
import type { AuditLog } from "../audit/audit";
import type { InstanceRoles } from "../access/instance-roles";
import { actorOf } from "../routing/auth.middleware";
import { documentedRouter } from "../routing/documented-router";
import { presentAuditPage } from "./audit.presenters";
import { auditQuery } from "./audit.schemas";

export function auditRoutes(audit: AuditLog, roles: InstanceRoles): Router {
  const routes = documentedRouter("Audit");

  routes.get("/audit", {
    summary: "The audit trail, newest first (administrators)",
    query: auditQuery,
    returns: "`{events: [{at, action, actor, address, object_id, detail}], next}`; `next` (null on the last page) is the `before` of the next page",
    errors: { 403: "The caller is not an administrator of this instance" },
  }, async ({ query }, _req, res) => {
    await roles.requireAdministrator(actorOf(res), "read the audit trail");
    res.json(presentAuditPage(await audit.page(query.limit, query.before ?? null)));
  });

  return routes.router;
}
