import { Column, Entity, PrimaryColumn } from "typeorm";

/** The organisation-wide catalog: one row per model downloaded to the model server, with its benchmark. */
@Entity({ name: "models" })
export class ModelRecord {
  @PrimaryColumn({ type: "varchar" })
  id: string;

  /** Canonical Ollama name ("llama3.2:latest"). */
  @Column({ type: "varchar", name: "model_name", unique: true })
  modelName: string;

  @Column({ type: "integer", name: "total_tokens_processed" })
  totalTokensProcessed: number;

  @Column({ type: "real", name: "tokens_per_second" })
  tokensPerSecond: number;

  @Column({ type: "real", name: "time_to_first_token_ms", nullable: true })
  timeToFirstTokenMs: number | null;

  @Column({ type: "integer", name: "size_bytes" })
  sizeBytes: number;

  @Column({ type: "varchar" })
  digest: string;

  @Column({ type: "varchar", nullable: true })
  family: string | null;

  @Column({ type: "varchar", name: "parameter_size", nullable: true })
  parameterSize: string | null;

  @Column({ type: "varchar", nullable: true })
  quantization: string | null;

  @Column({ type: Date, name: "pulled_at" })
  pulledAt: Date;

  @Column({ type: Date, name: "benchmarked_at", nullable: true })
  benchmarkedAt: Date | null;

  /** What the model server says the model can do (`completion`, `embedding`, `tools`, ...); null when not known (recorded before capabilities were kept, or a server that does not say). */
  @Column({ type: "simple-json", nullable: true })
  capabilities: string[] | null;
}
