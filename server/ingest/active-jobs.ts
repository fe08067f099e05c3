import type { EntityManager } from "typeorm";
import { ConflictError } from "../errors";
import { IngestJob } from "../data/entities/ingest-job.entity";
import { Pipeline } from "../data/entities/pipeline.entity";

/** Deleting what a queued or running job writes to would pull the ground from under it: 409 until it ends. */
export async function assertNoActiveIngestion(tx: EntityManager, where: { dataSourceId: string } | { collectionId: string }): Promise<void> {
  const active = await tx
    .createQueryBuilder(IngestJob, "j")
    .innerJoin(Pipeline, "p", "p.id = j.pipeline_id")
    .where("j.run_state IN ('queued', 'running')")
    .andWhere("dataSourceId" in where ? "p.data_source_id = :id" : "p.collection_id = :id", {
      id: "dataSourceId" in where ? where.dataSourceId : where.collectionId,
    })
    .getExists();
  if (active) throw new ConflictError("An ingestion job is queued or running here; delete once it has finished");
}
