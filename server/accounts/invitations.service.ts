import crypto from "node:crypto";
import { z } from "zod";
import { IsNull, MoreThan, type DataSource, type EntityManager } from "typeorm";
import { ConflictError, ForbiddenError, HttpError, NotFoundError, ValidationError } from "../errors";
import { Invitation } from "../data/entities/invitation.entity";
import { GroupMember } from "../data/entities/group-member.entity";
import { User } from "../data/entities/user.entity";
import { requireGroupMembership } from "../access/access";
import type { Actor } from "../access/actor";
import type { InstanceRoles } from "../access/instance-roles";
import type { SignupMode } from "../settings";

/** How long an invitation link lets its address sign up. */
export const INVITATION_DAYS = 7;
const DAY_MS = 86_400_000;

/** A new invitation and the one place its link appears: the answer to whoever made it. */
export interface IssuedInvitation {
  invitation: Invitation;
  link: string;
}

/** Who may sign up, and how (config SIGNUP, SIGNUP_DOMAINS, ADMIN_EMAILS). */
export interface SignupRules {
  mode: SignupMode;
  domains: readonly string[];
}

/** What a sign-up was admitted by: the invitations it uses up (their groups are joined). */
export interface Admission {
  invitations: Invitation[];
}

class GoneError extends HttpError {
  constructor(detail: string) {
    super(410, detail);
  }
}

function hashToken(token: string): string {
  return crypto.createHash("sha256").update(token, "utf8").digest("hex");
}

function normalize(email: string): string {
  return email.trim().toLowerCase();
}

/**
 * Invitations and the sign-up rules they open (docs/decisions/0360-roles-and-invitations.md).
 * Each change is one call here, so an audit trail can record it in one line.
 */
export class InvitationsService {
  constructor(
    private readonly db: DataSource,
    private readonly roles: InstanceRoles,
    private readonly rules: SignupRules,
    private readonly publicUrl: string,
  ) {}

  /** POST /invitations: an administrator invites an address to sign up. */
  async invite(actor: Actor, rawEmail: string): Promise<IssuedInvitation> {
    return this.db.transaction(async (tx) => {
      await this.roles.requireAdministrator(actor, "invite people", tx);
      this.assertInvitationsAllowed();
      const email = normalize(rawEmail);
      if (await tx.exists(User, { where: { email } })) throw new ConflictError("An account with this email already exists");
      return this.issue(tx, actor, email, null);
    });
  }

  /**
   * Adding a member by an address without an account: an invitation into that group instead.
   * Group members may on an open instance; under SIGNUP=invite only an administrator may.
   */
  async inviteToGroup(actor: Actor, groupId: string, rawEmail: string): Promise<IssuedInvitation> {
    return this.db.transaction(async (tx) => {
      await requireGroupMembership(tx, actor, groupId);
      this.assertInvitationsAllowed();
      if (this.rules.mode !== "open") await this.roles.requireAdministrator(actor, "invite someone who has no account yet", tx);
      const email = normalize(rawEmail);
      // The path's email was only checked to be present: an invitation needs a real address.
      if (!z.email().max(254).safeParse(email).success) throw new ValidationError([{ field: "email", message: "must be a valid email address" }]);
      return this.issue(tx, actor, email, groupId);
    });
  }

  /** Every invitation, newest first (administrators). */
  async list(actor: Actor): Promise<Invitation[]> {
    await this.roles.requireAdministrator(actor, "see invitations");
    return this.db.manager.find(Invitation, { order: { createdAt: "DESC", id: "ASC" } });
  }

  /** DELETE /invitations/{id}: its link stops working. */
  async revoke(actor: Actor, id: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      await this.roles.requireAdministrator(actor, "withdraw invitations", tx);
      const found = await tx.findOne(Invitation, { where: { id } });
      if (!found) throw new NotFoundError("Invitation not found");
      await tx.delete(Invitation, { id });
    });
  }

  /** What a link's sign-up page shows: the invitation it names, if it can still be used (404 unknown, 410 used or expired). */
  async lookup(token: string): Promise<Invitation> {
    return this.usable(this.db.manager, token);
  }

  /** Whether nobody has signed up yet: the first account may always sign up and becomes the administrator (without ADMIN_EMAILS). */
  async firstAccountPending(): Promise<boolean> {
    return !this.roles.namedInConfig && !(await this.db.manager.exists(User, {}));
  }

  /**
   * The sign-up rule, inside the sign-up's transaction: with an invitation, the link must be
   * usable and for this address; without one, the address is an administrator's, or it is the
   * first account, or sign-up is open to its domain and no invitation is waiting for it.
   */
  async admit(tx: EntityManager, rawEmail: string, token: string | null): Promise<Admission> {
    const email = normalize(rawEmail);
    if (token !== null) {
      const invitation = await this.usable(tx, token);
      if (invitation.email !== email) throw new ValidationError([{ field: "email", message: "must be the address the invitation was made for" }]);
      return { invitations: await this.pendingFor(tx, email) };
    }
    if (this.roles.isAdminEmail(email)) return { invitations: await this.pendingFor(tx, email) };
    if (!this.roles.namedInConfig && !(await tx.exists(User, {}))) return { invitations: [] };
    if (this.rules.mode === "off") throw new ForbiddenError("Sign-up is closed on this instance: ask its administrator for an account");
    if (this.rules.mode === "invite") throw new ForbiddenError("Sign-up on this instance is by invitation: ask an administrator for an invitation link");
    const domain = email.slice(email.lastIndexOf("@") + 1);
    if (this.rules.domains.length > 0 && !this.rules.domains.includes(domain)) {
      throw new ForbiddenError(`Sign-up here is open to addresses at ${this.rules.domains.join(", ")} only; an administrator can invite other addresses`);
    }
    // Whoever was invited as this address keeps their place: the link is the way in.
    if ((await this.pendingFor(tx, email)).length > 0) throw new ForbiddenError("An invitation is waiting for this address: sign up with the link from it");
    return { invitations: [] };
  }

  /** After the account is inserted: its invitations are used up, and it joins their groups. */
  async welcome(tx: EntityManager, userId: string, admission: Admission): Promise<void> {
    const now = new Date();
    for (const invitation of admission.invitations) {
      await tx.update(Invitation, { id: invitation.id }, { usedAt: now });
      if (invitation.groupId && !(await tx.exists(GroupMember, { where: { groupId: invitation.groupId, userId } }))) {
        await tx.insert(GroupMember, { groupId: invitation.groupId, userId, createdAt: now });
      }
    }
  }

  private assertInvitationsAllowed(): void {
    if (this.rules.mode === "off") throw new ConflictError("Sign-up is off on this instance (SIGNUP=off), so nobody can be invited; whoever runs the server can set SIGNUP=invite");
  }

  /** One pending invitation per address and group: a new one replaces the last (whose link then stops working). */
  private async issue(tx: EntityManager, actor: Actor, email: string, groupId: string | null): Promise<IssuedInvitation> {
    await tx.delete(Invitation, { email, groupId: groupId ?? IsNull(), usedAt: IsNull() });
    const token = crypto.randomBytes(32).toString("base64url");
    const now = new Date();
    const invitation = tx.create(Invitation, {
      id: crypto.randomUUID(),
      email,
      tokenHash: hashToken(token),
      groupId,
      invitedBy: actor.userId,
      createdAt: now,
      expiresAt: new Date(now.getTime() + INVITATION_DAYS * DAY_MS),
      usedAt: null,
    });
    await tx.insert(Invitation, invitation);
    return { invitation, link: `${this.publicUrl.replace(/\/$/, "")}/#/signup?invitation=${token}` };
  }

  private async usable(db: EntityManager, token: string): Promise<Invitation> {
    const invitation = await db.findOne(Invitation, { where: { tokenHash: hashToken(token) } });
    if (!invitation) throw new NotFoundError("This invitation link is not valid (it may have been withdrawn): ask an administrator for a new one");
    if (invitation.usedAt) throw new GoneError("This invitation has already been used: sign in instead");
    if (invitation.expiresAt.getTime() <= Date.now()) throw new GoneError("This invitation has expired: ask an administrator for a new one");
    return invitation;
  }

  private pendingFor(db: EntityManager, email: string): Promise<Invitation[]> {
    return db.find(Invitation, { where: { email, usedAt: IsNull(), expiresAt: MoreThan(new Date()) } });
  }
}
