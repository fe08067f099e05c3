import { ForbiddenError } from "../errors";
import type { Actor } from "./actor";

/**
 * Whether the actor is an instance administrator: an account named in ADMIN_EMAILS. The one
 * question every administrator-only rule asks (the audit trail, deleting another account).
 */
export function isAdministrator(actor: Actor, adminEmails: readonly string[]): boolean {
  return adminEmails.includes(actor.email.trim().toLowerCase());
}

/** 403 for anyone else, saying who can. */
export function requireAdministrator(actor: Actor, adminEmails: readonly string[], what: string): void {
  if (!isAdministrator(actor, adminEmails)) throw new ForbiddenError(`Only an administrator can ${what}`);
}

/** Deleting an account: its owner, or an administrator; anyone else is answered as for a missing account (404). */
export function mayDeleteAccount(actor: Actor, userId: string, adminEmails: readonly string[]): boolean {
  return actor.userId === userId || isAdministrator(actor, adminEmails);
}
