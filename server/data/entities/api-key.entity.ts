import { Column, Entity, PrimaryColumn } from "typeorm";

/** A user's API key: only its SHA-256 is kept (the key itself is shown once, at creation). */
@Entity({ name: "api_keys" })
export class ApiKey {
  @PrimaryColumn({ type: "varchar" })
  id: string;

  @Column({ type: "varchar", name: "user_id" })
  userId: string;

  @Column({ type: "varchar" })
  name: string;

  /** SHA-256 of the key, hex. Never leaves the server (http/api-keys.presenters.ts). */
  @Column({ type: "varchar", name: "key_hash", unique: true })
  keyHash: string;

  @Column({ type: Date, name: "created_at" })
  createdAt: Date;

  @Column({ type: Date, name: "last_used_at", nullable: true })
  lastUsedAt: Date | null;
}
