import type { IngestJob } from "../data/entities/ingest-job.entity";
import type { Pipeline } from "../data/entities/pipeline.entity";
import { isoNoZone } from "../time";

export function presentPipeline(pipeline: Pipeline) {
  return {
    id: pipeline.id,
    name: pipeline.name,
    description: pipeline.description,
    data_source_id: pipeline.dataSourceId,
    collection_id: pipeline.collectionId,
    status: pipeline.status,
    created_at: isoNoZone(pipeline.createdAt),
  };
}

/** null until discovery has counted something; 100.0 once complete (docs/decisions.md: Ingestion job). */
export function progressPercentage(job: IngestJob): number | null {
  if (job.status === "completed") return 100.0;
  if (job.entitiesDiscovered === 0) return null;
  return Math.round((job.entitiesProcessed / job.entitiesDiscovered) * 1000) / 10;
}

/** An ingestion job of a pipeline (POST /data_pipelines/{id}/ingest, .../ingest/status, .../jobs). */
export function presentJob(job: IngestJob) {
  return {
    job_id: job.id,
    pipeline_id: job.pipelineId,
    status: job.status,
    entities_discovered: job.entitiesDiscovered,
    entities_processed: job.entitiesProcessed,
    entities_failed: job.entitiesFailed,
    entities_skipped: job.entitiesSkipped,
    bytes_processed: job.bytesProcessed,
    current_entity: job.currentEntity,
    error_message: job.errorMessage,
    errors: job.errors,
    progress_percentage: progressPercentage(job),
    queued: job.runState === "queued",
    started_at: isoNoZone(job.startedAt),
    completed_at: isoNoZone(job.completedAt),
    // Where the time went (docs/decisions.md): null for jobs recorded before it was kept.
    timings: job.stats?.timings ?? null,
    by_type: job.stats?.by_type ?? null,
  };
}
