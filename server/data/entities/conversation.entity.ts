import { Column, Entity, PrimaryColumn } from "typeorm";

/** A user's conversation with one collection: only its author sees it; it goes with the collection. */
@Entity({ name: "conversations" })
export class Conversation {
  @PrimaryColumn({ type: "varchar" })
  id: string;

  @Column({ type: "varchar", name: "collection_id" })
  collectionId: string;

  @Column({ type: "varchar", name: "user_id" })
  userId: string;

  /** The first question, shortened: what the conversation list shows. */
  @Column({ type: "varchar" })
  title: string;

  @Column({ type: Date, name: "created_at" })
  createdAt: Date;

  /** The last turn's time: the list is newest first by it. */
  @Column({ type: Date, name: "updated_at" })
  updatedAt: Date;
}
