import { Column, Entity, PrimaryColumn } from "typeorm";

@Entity({ name: "users" })
export class User {
  @PrimaryColumn({ type: "varchar" })
  id: string;

  /** Stored lower-cased: emails are case-insensitive and unique. */
  @Column({ type: "varchar", unique: true })
  email: string;

  /** Null for accounts created by social sign-in. Never leaves the server (see http/accounts.presenters.ts). */
  @Column({ type: "varchar", name: "password_hash", nullable: true })
  passwordHash: string | null;

  @Column({ type: "varchar", name: "display_name", nullable: true })
  displayName: string | null;

  @Column({ type: "varchar", name: "avatar_url", nullable: true })
  avatarUrl: string | null;

  /** The identity provider's `sub` for social accounts. */
  @Column({ type: "varchar", name: "idp_subject", nullable: true, unique: true })
  idpSubject: string | null;

  @Column({ type: Date, name: "created_at" })
  createdAt: Date;

  @Column({ type: Date, name: "updated_at" })
  updatedAt: Date;

  @Column({ type: Date, name: "last_sign_in_at", nullable: true })
  lastSignInAt: Date | null;

  /** Raised by a password change and "sign out everywhere": a session token names the generation it was issued in. */
  @Column({ type: "integer", name: "session_generation", default: 0 })
  sessionGeneration: number;
}
