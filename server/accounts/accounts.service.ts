import crypto from "node:crypto";
import type { DataSource } from "typeorm";
import { ConflictError, ForbiddenError, NotFoundError, UnauthorizedError } from "../errors";
import { User } from "../data/entities/user.entity";
import { isUniqueViolation } from "../data/db-errors";
import type { Group } from "../data/entities/group.entity";
import { visibleGroupsOf } from "../access/access";
import type { Actor } from "../access/actor";
import type { IdentityProvider } from "./identity-provider";
import { DUMMY_HASH } from "./passwords";
import type { PasswordHasher } from "./password-hasher";
import type { SignInLimiter } from "./sign-in-limiter";
import type { TokenService } from "./tokens";
import type { Admission, InvitationsService } from "./invitations.service";
import type { InstanceRoles } from "../access/instance-roles";
import type { AuditLog } from "../audit/audit";
import { deleteAccount } from "./account-deletion";

const WRONG_CREDENTIALS = "Incorrect email or password";

export interface SignedIn {
  user: User;
  token: string;
}

export class AccountsService {
  constructor(
    private readonly db: DataSource,
    private readonly tokens: TokenService,
    private readonly limiter: SignInLimiter,
    private readonly identityProvider: IdentityProvider,
    private readonly hasher: PasswordHasher,
    private readonly audit: AuditLog,
    /** Who may sign up (SIGNUP, invitations) and who administers the instance. */
    private readonly signup: { invitations: InvitationsService; roles: InstanceRoles },
    /** What else goes with a deleted account outside the database (the Drive grant's tokens in the secret store). */
    private readonly afterDeletion: (userId: string) => Promise<void> = async () => undefined,
  ) {}

  /** `invitation`: the token of an invitation link; without one the sign-up rules decide (invitations.service.ts: admit). */
  async signUp(email: string, password: string, ip: string, invitation: string | null = null): Promise<SignedIn> {
    await this.limiter.reserveSignUp(ip);
    const normalized = email.trim().toLowerCase();
    // The rules first, so someone who may not sign up cannot learn which addresses have accounts; again below, in the transaction.
    await this.signup.invitations.admit(this.db.manager, normalized, invitation);
    if (await this.db.manager.exists(User, { where: { email: normalized } })) {
      throw new ConflictError("An account with this email already exists");
    }
    const now = new Date();
    const user = this.db.manager.create(User, {
      id: crypto.randomUUID(),
      email: normalized,
      passwordHash: await this.hasher.hash(password),
      displayName: null,
      avatarUrl: null,
      idpSubject: null,
      createdAt: now,
      updatedAt: now,
      lastSignInAt: now,
      sessionGeneration: 0,
    });
    try {
      await this.db.transaction(async (tx) => {
        const admission = await this.signup.invitations.admit(tx, normalized, invitation);
        await tx.insert(User, user);
        await this.signup.invitations.welcome(tx, user.id, admission);
      });
    } catch (error) {
      // Two sign-ups racing for one email: the unique index decides.
      if (isUniqueViolation(error)) throw new ConflictError("An account with this email already exists");
      throw error;
    }
    await this.audit.record({ action: "sign_up", actorId: user.id, actorEmail: user.email, address: ip, objectId: user.id });
    return { user, token: await this.tokens.issue(user) };
  }

  async signIn(email: string, password: string, ip: string): Promise<SignedIn> {
    const normalized = email.trim().toLowerCase();
    // Reserved before the slow compare (and before anything else awaits), so concurrent attempts cannot all pass the check.
    const reservation = await this.limiter.reserveSignIn(ip, normalized);
    const user = await this.db.manager.findOne(User, { where: { email: normalized } });
    const check = await this.hasher.check(password, user?.passwordHash ?? DUMMY_HASH);
    // A failure keeps its reservation: that is the count of failures.
    if (!user?.passwordHash || !check.ok) {
      await this.audit.record({ action: "sign_in.failed", actorId: null, actorEmail: normalized.slice(0, 254), address: ip, objectId: user?.id ?? null });
      throw new UnauthorizedError(WRONG_CREDENTIALS);
    }
    await this.limiter.signInSucceeded(reservation);
    user.lastSignInAt = new Date();
    const changes: Partial<User> = { lastSignInAt: user.lastSignInAt };
    // A hash of the older kind (cut at 72 bytes, lower cost) is replaced while the password is at hand.
    if (check.outdated) changes.passwordHash = await this.hasher.hash(password);
    await this.db.transaction((tx) => tx.update(User, { id: user.id }, changes));
    await this.audit.record({ action: "sign_in", actorId: user.id, actorEmail: user.email, address: ip, objectId: user.id });
    return { user, token: await this.tokens.issue(user) };
  }

  /**
   * Checks the current password, keeps the new one, and ends every other session: the
   * generation goes up, so every token issued before is refused; the caller gets a new one.
   */
  async changePassword(actor: Actor, currentPassword: string, newPassword: string, ip: string): Promise<SignedIn> {
    refuseApiKey(actor, "change the password");
    const user = await this.requireUser(actor);
    if (!user.passwordHash) throw new ConflictError("This account signs in with an identity provider and has no password here");
    const check = await this.hasher.check(currentPassword, user.passwordHash);
    if (!check.ok) throw new ForbiddenError("The current password is not right");
    const passwordHash = await this.hasher.hash(newPassword);
    const updated = await this.raiseGeneration(user.id, { passwordHash });
    await this.audit.record({ action: "password.changed", actorId: user.id, actorEmail: user.email, address: ip, objectId: user.id });
    return { user: updated, token: await this.tokens.issue(updated) };
  }

  /** Every session token of the user, this one included, stops working (API keys do not: they are revoked one by one). */
  async signOutEverywhere(actor: Actor, ip: string): Promise<void> {
    const user = await this.requireUser(actor);
    await this.raiseGeneration(user.id, {});
    await this.audit.record({ action: "sign_out.everywhere", actorId: user.id, actorEmail: user.email, address: ip, objectId: user.id });
  }

  /**
   * Deletes an account: its owner, or an administrator (anyone else: 404, as for a missing one).
   * Rules in account-deletion.ts; the event names who deleted whom.
   */
  async deleteAccount(actor: Actor, userId: string, ip: string): Promise<void> {
    if (actor.userId === userId) refuseApiKey(actor, "delete the account");
    const mayDelete = await this.signup.roles.mayDeleteAccount(actor, userId);
    const user = mayDelete ? await this.db.manager.findOne(User, { where: { id: userId } }) : null;
    if (!user) throw new NotFoundError("User not found");
    await deleteAccount(this.db, user.id);
    await this.afterDeletion(user.id);
    await this.audit.record({ action: "account.deleted", actorId: actor.userId, actorEmail: actor.email, address: ip, objectId: user.id, detail: user.email });
  }

  private async raiseGeneration(userId: string, changes: Partial<User>): Promise<User> {
    return this.db.transaction(async (tx) => {
      await tx.increment(User, { id: userId }, "sessionGeneration", 1);
      if (Object.keys(changes).length) await tx.update(User, { id: userId }, { ...changes, updatedAt: new Date() });
      return tx.findOneOrFail(User, { where: { id: userId } });
    });
  }

  /** Exchanges an identity provider's session token: creates the social user on first use, updates the profile after. */
  async exchangeIdentityToken(idpToken: string | null): Promise<SignedIn> {
    const claims = await this.identityProvider.verify(idpToken);
    const now = new Date();
    const user = await this.db.transaction(async (tx) => {
      let admission: Admission | null = null;
      let user = await tx.findOne(User, { where: { idpSubject: claims.subject } });
      if (!user) {
        if (await tx.exists(User, { where: { email: claims.email } })) {
          // Linking by email alone would let any provider account with that address take over a password account.
          throw new ConflictError("An account with this email already exists; sign in with email and password");
        }
        // A new social account follows the same sign-up rules as a password one (no invitation link here).
        admission = await this.signup.invitations.admit(tx, claims.email, null);
        user = tx.create(User, {
          id: crypto.randomUUID(),
          email: claims.email,
          passwordHash: null,
          idpSubject: claims.subject,
          createdAt: now,
        });
      }
      user.displayName = claims.name;
      user.avatarUrl = claims.picture;
      user.updatedAt = now;
      user.lastSignInAt = now;
      if (claims.email !== user.email && !(await tx.exists(User, { where: { email: claims.email } }))) user.email = claims.email;
      await tx.save(User, user);
      if (admission) await this.signup.invitations.welcome(tx, user.id, admission);
      return user;
    });
    return { user, token: await this.tokens.issue(user) };
  }

  /** The user behind a verified token; a token for a user that no longer exists is a 401. */
  async requireUser(actor: Actor): Promise<User> {
    const user = await this.db.manager.findOne(User, { where: { id: actor.userId } });
    if (!user) throw new UnauthorizedError("Account no longer exists: sign in again");
    return user;
  }

  /** The caller and whether they administer the instance (GET /users/me `is_admin`). */
  async profile(actor: Actor): Promise<{ user: User; isAdmin: boolean }> {
    const user = await this.requireUser(actor);
    return { user, isAdmin: await this.signup.roles.isAdministrator(actor) };
  }

  async listUsers(): Promise<User[]> {
    return this.db.manager.find(User, { order: { email: "ASC" } });
  }

  /** A user's groups, as far as the actor may see them (access: visibleGroupsOf). */
  async groupsOfUser(actor: Actor, userId: string): Promise<Group[]> {
    return visibleGroupsOf(this.db.manager, actor, userId);
  }
}

/** A leaked API key must not lock its owner out or outlive its revocation: these actions need the password's session. */
function refuseApiKey(actor: Actor, what: string): void {
  if (actor.apiKeyId) throw new ForbiddenError(`An API key cannot ${what}; sign in with the password`);
}
