import crypto from "node:crypto";
import { LessThan, type DataSource } from "typeorm";
import { AuditEvent } from "../data/entities/audit-event.entity";

/** What the audit trail records (docs/decisions/0382-audit-trail.md). */
export const AUDIT_ACTIONS = [
  "sign_in",
  "sign_in.failed",
  "sign_up",
  "sign_out.everywhere",
  "password.changed",
  "account.deleted",
  "api_key.created",
  "api_key.revoked",
  "invitation.created",
  "invitation.deleted",
  "group.created",
  "group.deleted",
  "group.member_added",
  "group.member_removed",
  "group.parent_set",
  "source.created",
  "source.deleted",
  "collection.created",
  "collection.deleted",
  "model.pull_requested",
  "model.deleted",
  "backup.made",
  "backup.restored",
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export interface AuditRecord {
  action: AuditAction;
  /** Who did it; null when no one was signed in (a failed sign-in names the email tried in `actorEmail`). */
  actorId: string | null;
  actorEmail: string | null;
  address: string | null;
  objectId?: string | null;
  detail?: string | null;
}

export interface AuditPage {
  events: AuditEvent[];
  /** Pass as `before` for the next (older) page; null on the last page. */
  next: string | null;
}

/** Expired events are deleted at most this often, by the first write after the interval. */
const PRUNE_EVERY_MS = 60 * 60_000;

/**
 * The audit trail. Every event is written before the answer that reports its action goes out
 * (awaited, one row), so an answered action always has its event; pruning runs beside requests.
 */
export class AuditLog {
  private lastPruneMs = 0;

  constructor(
    private readonly db: DataSource,
    private readonly keepDays: number,
    private readonly now: () => number = Date.now,
  ) {}

  async record(event: AuditRecord): Promise<void> {
    await this.db.manager.insert(AuditEvent, {
      id: crypto.randomUUID(),
      at: new Date(this.now()),
      action: event.action,
      actorId: event.actorId,
      actorEmail: event.actorEmail,
      address: event.address,
      objectId: event.objectId ?? null,
      detail: event.detail ?? null,
    });
    if (this.now() - this.lastPruneMs >= PRUNE_EVERY_MS) {
      this.lastPruneMs = this.now();
      // A failed prune is retried by a later write; it must not fail the request that triggered it.
      void this.prune().catch(() => undefined);
    }
  }

  /** Deletes the events older than AUDIT_DAYS; answers how many went. */
  async prune(): Promise<number> {
    const result = await this.db.manager.delete(AuditEvent, { at: LessThan(this.cutoff()) });
    return result.affected ?? 0;
  }

  /** Newest first, `limit` at a time; `before` is the `next` of the page before. Events past AUDIT_DAYS are never shown. */
  async page(limit: number, before: string | null): Promise<AuditPage> {
    const query = this.db.manager
      .createQueryBuilder(AuditEvent, "e")
      .where("e.at >= :cutoff", { cutoff: this.cutoff() })
      .orderBy("e.at", "DESC")
      .addOrderBy("e.id", "DESC")
      .take(limit + 1);
    const cursor = before ? decodeCursor(before) : null;
    if (cursor) query.andWhere("(e.at < :at OR (e.at = :at AND e.id < :id))", { at: cursor.at, id: cursor.id });
    const rows = await query.getMany();
    const events = rows.slice(0, limit);
    const last = events.at(-1);
    return { events, next: rows.length > limit && last ? encodeCursor(last) : null };
  }

  private cutoff(): Date {
    return new Date(this.now() - this.keepDays * 86_400_000);
  }
}

function encodeCursor(event: AuditEvent): string {
  return Buffer.from(`${event.at.toISOString()}|${event.id}`, "utf8").toString("base64url");
}

/** null for a cursor this server did not make: the schema has refused it already (audit.schemas.ts). */
export function decodeCursor(cursor: string): { at: Date; id: string } | null {
  const [at, id, ...rest] = Buffer.from(cursor, "base64url").toString("utf8").split("|");
  const date = new Date(at ?? "");
  if (rest.length || !id || Number.isNaN(date.getTime())) return null;
  return { at: date, id };
}
