import { Column, Entity, PrimaryColumn } from "typeorm";

/** A user's personal list entry: a catalog model plus that user's hardware notes. */
@Entity({ name: "user_models" })
export class UserModelRecord {
  @PrimaryColumn({ type: "varchar" })
  id: string;

  @Column({ type: "varchar", name: "user_id" })
  userId: string;

  @Column({ type: "varchar", name: "model_id" })
  modelId: string;

  @Column({ type: "varchar", name: "hardware_notes" })
  hardwareNotes: string;

  @Column({ type: Date, name: "created_at" })
  createdAt: Date;

  @Column({ type: Date, name: "updated_at" })
  updatedAt: Date;
}
