import { Column, Entity, PrimaryColumn } from "typeorm";

@Entity({ name: "collections" })
export class Collection {
  @PrimaryColumn({ type: "varchar" })
  id: string;

  @Column({ type: "varchar", unique: true })
  name: string;

  @Column({ type: "varchar", name: "owner_group_id" })
  ownerGroupId: string;

  /** The model that embeds its chunks for hybrid retrieval; null: keyword search only. */
  @Column({ type: "varchar", name: "embedding_model", nullable: true })
  embeddingModel: string | null;

  @Column({ type: Date, name: "created_at" })
  createdAt: Date;
}
