import { Column, Entity, PrimaryColumn } from "typeorm";

/** One question and its answer in a conversation, with the sources the answer was given (JSON). */
@Entity({ name: "conversation_turns" })
export class ConversationTurn {
  @PrimaryColumn({ type: "varchar" })
  id: string;

  @Column({ type: "varchar", name: "conversation_id" })
  conversationId: string;

  /** 0, 1, 2 ... in the order asked. */
  @Column({ type: "integer" })
  position: number;

  @Column({ type: "text" })
  question: string;

  /** What retrieval searched for: the question made self-contained (standaloneQuestion in server/ask/ask.service.ts). */
  @Column({ type: "text", name: "standalone_question" })
  standaloneQuestion: string;

  @Column({ type: "text" })
  answer: string;

  @Column({ type: "varchar" })
  model: string;

  /** JSON: the numbered sources as the `sources` event listed them. */
  @Column({ type: "text" })
  sources: string;

  /** JSON: the source numbers the answer cites. */
  @Column({ type: "text" })
  citations: string;

  @Column({ type: Date, name: "created_at" })
  createdAt: Date;
}
