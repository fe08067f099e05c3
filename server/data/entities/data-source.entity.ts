import { Column, Entity, PrimaryColumn } from "typeorm";

export const SOURCE_KINDS = ["smb", "drive"] as const;
export type SourceKind = (typeof SOURCE_KINDS)[number];

/** A place documents come from, owned by a group. Kind-specific details live in their own table (smb_sources, ...). */
@Entity({ name: "data_sources" })
export class DataSourceRecord {
  @PrimaryColumn({ type: "varchar" })
  id: string;

  @Column({ type: "varchar" })
  name: string;

  @Column({ type: "varchar" })
  kind: SourceKind;

  @Column({ type: "varchar", name: "owner_group_id" })
  ownerGroupId: string;

  /** The collection created with the source; deleted with it unless another pipeline still targets it. */
  @Column({ type: "varchar", name: "auto_collection_id", nullable: true })
  autoCollectionId: string | null;

  @Column({ type: Date, name: "created_at" })
  createdAt: Date;
}
