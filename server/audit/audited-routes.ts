import type { NextFunction, Request, Response } from "express";
import type { Actor } from "../access/actor";
import type { AuditAction, AuditLog } from "./audit";

type Body = Record<string, unknown> | undefined;

/** One audited route of the signed-in API: its method, its path under /api, and what its event says. */
interface AuditedRoute {
  method: string;
  path: RegExp;
  action: AuditAction;
  /** The object's id, from the path's captures, the request body or the answer's body. */
  objectId: (match: RegExpExecArray, answer: Body) => unknown;
  detail?: (match: RegExpExecArray, request: Body) => unknown;
  /** "start": recorded before the route runs (an event stream answers before its action ends); default: with a 2xx answer. */
  when?: "start";
}

const idOf = (value: unknown): unknown => (value && typeof value === "object" ? (value as { id?: unknown }).id : undefined);

/**
 * The routes of other areas whose success is an audit event, in one table, so their route files
 * stay as they are; the accounts' own events are recorded where they happen (accounts.service.ts).
 */
const AUDITED: AuditedRoute[] = [
  { method: "POST", path: /^\/user_groups$/, action: "group.created", objectId: (_m, answer) => answer?.created_group_id },
  { method: "DELETE", path: /^\/user_groups\/([^/]+)$/, action: "group.deleted", objectId: (m) => m[1] },
  { method: "PUT", path: /^\/user_groups\/([^/]+)\/members\/([^/]+)$/, action: "group.member_added", objectId: (m) => m[1], detail: (m) => decodeURIComponent(m[2]) },
  { method: "DELETE", path: /^\/user_groups\/([^/]+)\/members\/([^/]+)$/, action: "group.member_removed", objectId: (m) => m[1], detail: (m) => decodeURIComponent(m[2]) },
  { method: "PUT", path: /^\/user_groups\/([^/]+)\/parent$/, action: "group.parent_set", objectId: (m) => m[1], detail: (_m, body) => `parent ${body?.parent_group_id ?? "none"}` },
  { method: "POST", path: /^\/collections$/, action: "collection.created", objectId: (_m, answer) => answer?.id },
  { method: "DELETE", path: /^\/collections\/([^/]+)$/, action: "collection.deleted", objectId: (m) => m[1] },
  { method: "POST", path: /^\/data_sources\/(smb|folder|drive)(?:\/[^/]+)?$/, action: "source.created", objectId: (_m, answer) => idOf(answer?.data_source), detail: (m) => m[1] },
  { method: "DELETE", path: /^\/data_sources\/([^/]+)$/, action: "source.deleted", objectId: (m) => m[1] },
  { method: "POST", path: /^\/models$/, action: "model.pull_requested", objectId: () => null, detail: (_m, body) => body?.model_name, when: "start" },
  { method: "DELETE", path: /^\/models\/([^/]+)$/, action: "model.deleted", objectId: (m) => decodeURIComponent(m[1]) },
  { method: "POST", path: /^\/invitations$/, action: "invitation.created", objectId: (_m, answer) => idOf(answer), detail: (_m, body) => body?.email },
  { method: "DELETE", path: /^\/invitations\/([^/]+)$/, action: "invitation.deleted", objectId: (m) => m[1] },
];

const text = (value: unknown): string | null => (typeof value === "string" || typeof value === "number" ? String(value).slice(0, 500) : null);

/**
 * Mounted after authentication: for an audited route, the event is written (awaited) before the
 * answer leaves, so a client that saw the success can rely on its event; a failure records nothing.
 */
export function auditedRoutes(audit: AuditLog) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const route = AUDITED.find((r) => r.method === req.method && r.path.test(req.path));
    if (!route) return next();
    const match = route.path.exec(req.path)!;
    const actor = res.locals.actor as Actor;
    const event = (answer: Body) => ({
      action: route.action,
      actorId: actor.userId,
      actorEmail: actor.email,
      // As routing/auth.middleware.ts's clientAddress (not imported: audit/ sits below routing/).
      address: req.ip ?? req.socket.remoteAddress ?? "unknown",
      objectId: text(route.objectId(match, answer)),
      detail: text(route.detail?.(match, req.body as Body)),
    });
    if (route.when === "start") {
      await audit.record(event(undefined));
      return next();
    }
    const json = res.json.bind(res);
    const end = res.end.bind(res) as (...args: unknown[]) => Response;
    let recorded = false;
    const ok = () => res.statusCode >= 200 && res.statusCode < 300;
    // Express's json() ends the response itself: the first of the two to run records, the other passes through.
    res.json = (body: unknown) => {
      if (recorded || !ok()) return json(body);
      recorded = true;
      audit.record(event(body as Body)).then(() => json(body), next);
      return res;
    };
    res.end = ((...args: unknown[]) => {
      if (recorded || !ok()) return end(...args);
      recorded = true;
      audit.record(event(undefined)).then(() => end(...args), next);
      return res;
    }) as Response["end"];
    next();
  };
}
