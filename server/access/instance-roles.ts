import type { DataSource, EntityManager } from "typeorm";
import { ForbiddenError } from "../errors";
import { User } from "../data/entities/user.entity";
import type { Actor } from "./actor";

/**
 * Who administers the instance (docs/decisions/0360-roles-and-invitations.md): the addresses in
 * ADMIN_EMAILS, or, without them, the first account (the oldest; the next oldest if it goes).
 * `guarded`: a LAN server or ADMIN_EMAILS set, where instance-wide actions need an administrator;
 * a desktop on loopback without ADMIN_EMAILS lets every account do them, as before.
 */
export class InstanceRoles {
  constructor(
    private readonly db: DataSource,
    private readonly adminEmails: readonly string[],
    readonly guarded: boolean,
  ) {}

  /** An address that is an administrator's by configuration (and so may always sign up). */
  isAdminEmail(email: string): boolean {
    return this.adminEmails.includes(email.trim().toLowerCase());
  }

  /** Whether the instance's administrator comes from ADMIN_EMAILS (else: the first account). */
  get namedInConfig(): boolean {
    return this.adminEmails.length > 0;
  }

  /** `db`: a transaction's manager when the answer must hold inside it. */
  async isAdministrator(actor: Pick<Actor, "userId">, db: EntityManager = this.db.manager): Promise<boolean> {
    if (this.namedInConfig) {
      // The stored address, not the token's: a social account's address can change after its token was issued.
      const user = await db.findOne(User, { select: { id: true, email: true }, where: { id: actor.userId } });
      return !!user && this.isAdminEmail(user.email);
    }
    const [first] = await db.find(User, { select: { id: true }, order: { createdAt: "ASC", id: "ASC" }, take: 1 });
    return first?.id === actor.userId;
  }

  /** Something only an administrator does, in every mode (invitations); `action` completes "Only an administrator can ...". */
  async requireAdministrator(actor: Actor, action: string, db: EntityManager = this.db.manager): Promise<void> {
    if (!(await this.isAdministrator(actor, db))) throw new ForbiddenError(`Only an administrator of this instance can ${action}`);
  }

  /** An instance-wide action (catalog models, folder sources): an administrator's on a guarded instance, anyone's on the desktop. */
  async requireInstanceAction(actor: Actor, action: string): Promise<void> {
    if (this.guarded) await this.requireAdministrator(actor, action);
  }

  /** Deleting an account: its owner, or an administrator (anyone else is answered as for a missing account). */
  async mayDeleteAccount(actor: Actor, userId: string): Promise<boolean> {
    return actor.userId === userId || (await this.isAdministrator(actor));
  }
}
