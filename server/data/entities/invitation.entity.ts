import { Column, Entity, PrimaryColumn } from "typeorm";

/**
 * An invitation to sign up as one email address (docs/decisions/0360-roles-and-invitations.md):
 * single use, 7 days. Only the SHA-256 of its link's token is kept, so storage cannot sign anyone up.
 */
@Entity({ name: "invitations" })
export class Invitation {
  @PrimaryColumn({ type: "varchar" })
  id: string;

  /** Lower-cased, as users.email. */
  @Column({ type: "varchar" })
  email: string;

  @Column({ type: "varchar", name: "token_hash", unique: true })
  tokenHash: string;

  /** The group the new account joins (an invitation made by adding a member); null: none. */
  @Column({ type: "varchar", name: "group_id", nullable: true })
  groupId: string | null;

  @Column({ type: "varchar", name: "invited_by", nullable: true })
  invitedBy: string | null;

  @Column({ type: Date, name: "created_at" })
  createdAt: Date;

  @Column({ type: Date, name: "expires_at" })
  expiresAt: Date;

  /** When it was used to sign up; null: not yet. */
  @Column({ type: Date, name: "used_at", nullable: true })
  usedAt: Date | null;
}
