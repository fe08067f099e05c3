import crypto from "node:crypto";
import type { DataSource } from "typeorm";
import { ConflictError, UnauthorizedError } from "../errors";
import { User } from "../data/entities/user.entity";
import { isUniqueViolation } from "../data/db-errors";
import { rowExists } from "../data/plain-queries";
import type { Group } from "../data/entities/group.entity";
import { visibleGroupsOf } from "../access/access";
import type { Actor } from "../access/actor";
import type { IdentityProvider } from "./identity-provider";
import { checkPassword, dummyHash, hashPassword } from "./passwords";
import type { SignInLimiter } from "./sign-in-limiter";
import type { TokenService } from "./tokens";
import type { Admission, InvitationsService } from "./invitations.service";
import type { InstanceRoles } from "../access/instance-roles";

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
    /** Who may sign up (SIGNUP, invitations) and who administers the instance. */
    private readonly signup: { invitations: InvitationsService; roles: InstanceRoles },
  ) {
    // Made now, so the first sign-in with an unknown email takes no longer than a wrong password.
    void dummyHash();
  }

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
      passwordHash: await hashPassword(password),
      displayName: null,
      avatarUrl: null,
      idpSubject: null,
      createdAt: now,
      updatedAt: now,
      lastSignInAt: now,
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
    return { user, token: await this.tokens.issue(user) };
  }

  async signIn(email: string, password: string, ip: string): Promise<SignedIn> {
    const normalized = email.trim().toLowerCase();
    // Reserved before the slow compare (and before anything else awaits), so concurrent attempts cannot all pass the check.
    const reservation = await this.limiter.reserveSignIn(ip, normalized);
    const user = await this.db.manager.findOne(User, { where: { email: normalized } });
    const check = await checkPassword(password, user?.passwordHash ?? (await dummyHash()));
    // A failure keeps its reservation: that is the count of failures.
    if (!user?.passwordHash || !check.ok) throw new UnauthorizedError(WRONG_CREDENTIALS);
    await this.limiter.signInSucceeded(reservation);
    user.lastSignInAt = new Date();
    const changes: Partial<User> = { lastSignInAt: user.lastSignInAt };
    // A hash of the older kind (cut at 72 bytes, lower cost) is replaced while the password is at hand.
    if (check.outdated) changes.passwordHash = await hashPassword(password);
    await this.db.transaction((tx) => tx.update(User, { id: user.id }, changes));
    return { user, token: await this.tokens.issue(user) };
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

  /** Whether the user behind a verified token still exists: one lookup by primary key, on every authenticated request. */
  async userExists(userId: string): Promise<boolean> {
    return rowExists(this.db.manager, User, { id: userId });
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
