import { Column, Entity, PrimaryColumn } from "typeorm";

/** Direct membership only: parent groups do not inherit (docs/decisions/0001-access-rules.md). */
@Entity({ name: "group_members" })
export class GroupMember {
  @PrimaryColumn({ type: "varchar", name: "group_id" })
  groupId: string;

  @PrimaryColumn({ type: "varchar", name: "user_id" })
  userId: string;

  @Column({ type: Date, name: "created_at" })
  createdAt: Date;
}
