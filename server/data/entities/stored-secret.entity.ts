import { Column, Entity, PrimaryColumn } from "typeorm";

/**
 * A secret shared by every process of a team server (SMB passwords, drive tokens, the session
 * signing secret), sealed with SECRETS_KEY before it reaches the database: see
 * secrets/database-store.ts. Unused on the desktop, where the OS keychain holds secrets.
 */
@Entity({ name: "secrets" })
export class StoredSecret {
  @PrimaryColumn({ type: "varchar" })
  name: string;

  /** base64 of IV (12 bytes), GCM tag (16 bytes) and ciphertext. */
  @Column({ type: "varchar" })
  sealed: string;

  @Column({ type: Date, name: "updated_at" })
  updatedAt: Date;
}
