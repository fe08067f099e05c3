import { Column, Entity, Index, PrimaryColumn } from "typeorm";

/**
 * A Sluice user's Windows account on one file server (issue 33): the SIDs that decide which files
 * of that server's permission sources the user may read. No password: it was used for one login.
 */
@Entity({ name: "smb_account_links" })
@Index("smb_account_links_server_sid", ["server", "sid"], { unique: true })
@Index("smb_account_links_user_server", ["userId", "server"], { unique: true })
export class SmbAccountLink {
  @PrimaryColumn({ type: "varchar" })
  id: string;

  @Column({ type: "varchar", name: "user_id" })
  userId: string;

  /** The source the link was made through (null once it is deleted; the link stays, it is per server). */
  @Column({ type: "varchar", name: "data_source_id", nullable: true })
  dataSourceId: string | null;

  /** The source's server name, lower-case: one link applies to every source on that server. */
  @Column({ type: "varchar" })
  server: string;

  /** "DOMAIN\\user" as the server names it. */
  @Column({ type: "varchar" })
  account: string;

  @Column({ type: "varchar" })
  sid: string;

  /** JSON array of SIDs, as last resolved. */
  @Column({ type: "text", name: "group_sids" })
  groupSidsJson: string;

  /** JSON array of {sid, name}: the groups' names (LSA LookupSids) when last resolved. */
  @Column({ type: "text", name: "group_names" })
  groupNamesJson: string;

  @Column({ type: Date, name: "checked_at" })
  checkedAt: Date;

  get groupSids(): string[] {
    return JSON.parse(this.groupSidsJson) as string[];
  }

  get groups(): Array<{ sid: string; name: string }> {
    return JSON.parse(this.groupNamesJson) as Array<{ sid: string; name: string }>;
  }
}
