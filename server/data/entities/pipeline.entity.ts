import { Column, Entity, PrimaryColumn } from "typeorm";

/** inactive until the first job; processing while one runs; then active or failed (docs/decisions/0004-ingestion-job-contract.md). */
export type PipelineStatus = "inactive" | "processing" | "active" | "failed";

/** Joins one data source to one collection; one per (source, collection) pair. */
@Entity({ name: "pipelines" })
export class Pipeline {
  @PrimaryColumn({ type: "varchar" })
  id: string;

  @Column({ type: "varchar" })
  name: string;

  @Column({ type: "varchar" })
  description: string;

  @Column({ type: "varchar", name: "data_source_id" })
  dataSourceId: string;

  @Column({ type: "varchar", name: "collection_id" })
  collectionId: string;

  @Column({ type: "varchar" })
  status: PipelineStatus;

  @Column({ type: Date, name: "created_at" })
  createdAt: Date;
}
