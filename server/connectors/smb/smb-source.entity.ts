import { Column, Entity, PrimaryColumn } from "typeorm";

/** Connection details of an SMB source. The password is in the secret store (key smbPasswordKey), never here. */
@Entity({ name: "smb_sources" })
export class SmbSourceRecord {
  @PrimaryColumn({ type: "varchar", name: "data_source_id" })
  dataSourceId: string;

  @Column({ type: "varchar", name: "remote_system_username" })
  remoteSystemUsername: string;

  @Column({ type: "varchar", name: "remote_system_name" })
  remoteSystemName: string;

  @Column({ type: "varchar", name: "local_system_name" })
  localSystemName: string;

  @Column({ type: "varchar", name: "default_ip", nullable: true })
  defaultIp: string | null;

  @Column({ type: "integer" })
  port: number;

  /** Issue 33: each person sees only the files the file server lets their linked account read. */
  @Column({ type: "boolean", name: "source_permissions", default: false })
  sourcePermissions: boolean;
}

export function smbPasswordKey(dataSourceId: string): string {
  return `smb-password:${dataSourceId}`;
}
