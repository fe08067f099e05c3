import { Column, Entity, PrimaryColumn } from "typeorm";

/** One audited action. No foreign keys: an event outlives the account and the object it names. */
@Entity({ name: "audit_events" })
export class AuditEvent {
  @PrimaryColumn({ type: "varchar" })
  id: string;

  @Column({ type: Date })
  at: Date;

  @Column({ type: "varchar" })
  action: string;

  @Column({ type: "varchar", name: "actor_id", nullable: true })
  actorId: string | null;

  /** The actor's email when the event was written (the account may be gone later); for a failed sign-in, the email tried. */
  @Column({ type: "varchar", name: "actor_email", nullable: true })
  actorEmail: string | null;

  @Column({ type: "varchar", nullable: true })
  address: string | null;

  @Column({ type: "varchar", name: "object_id", nullable: true })
  objectId: string | null;

  @Column({ type: "text", nullable: true })
  detail: string | null;
}
