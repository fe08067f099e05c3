import type { EntityManager } from "typeorm";
import { IngestJob } from "../data/entities/ingest-job.entity";
import type { Pipeline } from "../data/entities/pipeline.entity";
import { PipelineSchedule } from "../data/entities/pipeline-schedule.entity";

/** What a pipeline record shows beside the pipeline row: its schedule and its latest job, whatever started it. */
export interface PipelineDetails {
  schedule: PipelineSchedule | null;
  lastJob: IngestJob | null;
}

export interface PipelineView extends PipelineDetails {
  pipeline: Pipeline;
}

/** The pipelines with their details, in two queries whatever their number. */
export async function withDetails(db: EntityManager, pipelines: Pipeline[]): Promise<PipelineView[]> {
  if (pipelines.length === 0) return [];
  const ids = pipelines.map((p) => p.id);
  const schedules = await db.createQueryBuilder(PipelineSchedule, "s").where("s.pipeline_id IN (:...ids)", { ids }).getMany();
  const lastJobs = await db
    .createQueryBuilder(IngestJob, "j")
    .where("j.pipeline_id IN (:...ids)", { ids })
    .andWhere("j.queue_seq = (SELECT MAX(j2.queue_seq) FROM ingest_jobs j2 WHERE j2.pipeline_id = j.pipeline_id)")
    .getMany();
  const scheduleOf = new Map(schedules.map((s) => [s.pipelineId, s]));
  const jobOf = new Map(lastJobs.map((j) => [j.pipelineId, j]));
  return pipelines.map((pipeline) => ({ pipeline, schedule: scheduleOf.get(pipeline.id) ?? null, lastJob: jobOf.get(pipeline.id) ?? null }));
}
