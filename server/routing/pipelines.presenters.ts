import type { IngestJob } from "../data/entities/ingest-job.entity";
import type { Pipeline } from "../data/entities/pipeline.entity";
import type { PipelineSchedule } from "../data/entities/pipeline-schedule.entity";
import type { PipelineDetails, PipelineView } from "../pipelines/pipeline-details";
import { isoNoZone } from "../time";
import { jobErrorSummary } from "./job-error-words";

/** A pipeline record; `details` are its schedule and latest job (none for a pipeline just created). */
export function presentPipeline(pipeline: Pipeline, details: PipelineDetails = { schedule: null, lastJob: null }) {
  return {
    id: pipeline.id,
    name: pipeline.name,
    description: pipeline.description,
    data_source_id: pipeline.dataSourceId,
    collection_id: pipeline.collectionId,
    status: pipeline.status,
    created_at: isoNoZone(pipeline.createdAt),
    schedule: details.schedule ? presentSchedule(details.schedule) : null,
    last_run: details.lastJob
      ? { job_id: details.lastJob.id, status: details.lastJob.status, completed_at: isoNoZone(details.lastJob.completedAt), trigger: details.lastJob.trigger }
      : null,
  };
}

export function presentPipelineView(view: PipelineView) {
  return presentPipeline(view.pipeline, view);
}

/** Either every_minutes or cron, never both (docs/decisions/0147-schedule-updates-and-storage.md). */
export function presentSchedule(schedule: PipelineSchedule) {
  return {
    ...(schedule.cron !== null ? { cron: schedule.cron } : { every_minutes: schedule.everyMinutes! }),
    timezone: schedule.timezone,
    paused: schedule.paused,
    next_run_at: isoNoZone(schedule.nextRunAt),
    skipped_runs: schedule.skippedRuns,
  };
}

/** null until discovery has counted something; 100.0 once complete (docs/decisions/0004-ingestion-job-contract.md). */
function progressPercentage(job: IngestJob): number | null {
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
    files_added: job.filesAdded,
    files_changed: job.filesChanged,
    files_removed: job.filesRemoved,
    files_unchanged: job.filesUnchanged,
    files_permissions_changed: job.filesPermissionsChanged,
    trigger: job.trigger,
    current_entity: job.currentEntity,
    error_message: job.errorMessage,
    // The same failure in plain words; error_message keeps the raw text (job-error-words.ts).
    error_summary: jobErrorSummary(job.errorMessage),
    errors: job.errors,
    skipped: job.skipped,
    cancel_requested_by: job.cancelRequestedBy,
    progress_percentage: progressPercentage(job),
    queued: job.runState === "queued",
    started_at: isoNoZone(job.startedAt),
    completed_at: isoNoZone(job.completedAt),
    // Where the time went (docs/decisions/0063-job-stage-timings.md): null for jobs recorded before it was kept.
    timings: job.stats?.timings ?? null,
    by_type: job.stats?.by_type ?? null,
  };
}
