import type { AuditEvent } from "../data/entities/audit-event.entity";
import type { AuditPage } from "../audit/audit";
import { isoNoZone } from "../time";

export function presentAuditEvent(event: AuditEvent) {
  return {
    id: event.id,
    at: isoNoZone(event.at),
    action: event.action,
    actor: event.actorId || event.actorEmail ? { id: event.actorId, email: event.actorEmail } : null,
    address: event.address,
    object_id: event.objectId,
    detail: event.detail,
  };
}

export function presentAuditPage(page: AuditPage) {
  return { events: page.events.map(presentAuditEvent), next: page.next };
}
