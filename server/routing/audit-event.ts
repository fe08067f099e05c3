import type { Request, Response } from "express";
import type { AuditAction, AuditLog } from "../audit/audit";
import { actorOf, clientAddress } from "./auth.middleware";

export interface ActionEvent {
  action: AuditAction;
  /** The id of what the action made, changed or removed, as stored (not as the path spelled it). */
  objectId: string | null;
  detail?: string | null;
}

/** Details come from what people typed (names, addresses): the trail keeps a bounded line of each. */
const DETAIL_LIMIT = 500;

/**
 * Records the signed-in caller's action. A handler calls it after its service call returned and
 * before it answers, so a refused or failed request records nothing, and a client that saw the
 * success can rely on its event (docs/decisions/0520-audit-recorded-by-the-handler.md).
 */
export async function recordAction(audit: AuditLog, req: Request, res: Response, event: ActionEvent): Promise<void> {
  const actor = actorOf(res);
  await audit.record({
    action: event.action,
    actorId: actor.userId,
    actorEmail: actor.email,
    address: clientAddress(req),
    objectId: event.objectId,
    detail: event.detail?.slice(0, DETAIL_LIMIT) ?? null,
  });
}
