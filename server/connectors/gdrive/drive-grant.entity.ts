import { Column, Entity, PrimaryColumn } from "typeorm";

/** A user's Google Drive connection. Its tokens are in the secret store (driveRefreshKey, driveAccessKey), never here. */
@Entity({ name: "drive_grants" })
export class DriveGrant {
  @PrimaryColumn({ type: "varchar", name: "user_id" })
  userId: string;

  @Column({ type: "varchar", name: "provider_subject" })
  providerSubject: string;

  @Column({ type: "varchar", nullable: true })
  email: string | null;

  /** Space-separated, as the token endpoint reports them. */
  @Column({ type: "varchar" })
  scopes: string;

  @Column({ type: Date, name: "connected_at" })
  connectedAt: Date;
}

export function driveRefreshKey(userId: string): string {
  return `drive-refresh:${userId}`;
}

export function driveAccessKey(userId: string): string {
  return `drive-access:${userId}`;
}
