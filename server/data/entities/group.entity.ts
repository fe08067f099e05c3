import { Column, Entity, PrimaryColumn } from "typeorm";

export const GROUP_PERMISSIONS = ["read", "write", "none"] as const;
export type GroupPermission = (typeof GROUP_PERMISSIONS)[number];

@Entity({ name: "user_groups" })
export class Group {
  @PrimaryColumn({ type: "varchar" })
  id: string;

  @Column({ type: "varchar", name: "group_name", unique: true })
  groupName: string;

  @Column({ type: "varchar", name: "group_permission" })
  groupPermission: GroupPermission;

  @Column({ type: "varchar", name: "parent_group_id", nullable: true })
  parentGroupId: string | null;

  @Column({ type: Date, name: "created_at" })
  createdAt: Date;
}
