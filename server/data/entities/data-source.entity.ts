import { Column, Entity, PrimaryColumn } from "typeorm";

/**
 * A place documents come from, owned by a group. Its kind names a module of connectors/
 * (registry.ts decides which kinds exist); kind-specific details live in that kind's tables.
 */
@Entity({ name: "data_sources" })
export class DataSourceRecord {
  @PrimaryColumn({ type: "varchar" })
  id: string;

  @Column({ type: "varchar" })
  name: string;

  @Column({ type: "varchar" })
  kind: string;

  @Column({ type: "varchar", name: "owner_group_id" })
  ownerGroupId: string;

  /** The collection created with the source; deleted with it unless another pipeline still targets it. */
  @Column({ type: "varchar", name: "auto_collection_id", nullable: true })
  autoCollectionId: string | null;

  @Column({ type: Date, name: "created_at" })
  createdAt: Date;
}
