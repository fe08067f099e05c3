import type { DataSource } from "typeorm";
import { IngestJob } from "../data/entities/ingest-job.entity";
import { requirePipelineAccess } from "../access/access";
import type { Actor } from "../access/actor";
import { requestCancel, type IngestQueue } from "./job-queue";

export class IngestService {
  constructor(
    private readonly db: DataSource,
    private readonly queue: IngestQueue,
  ) {}

  /** Access to the source and the collection is checked again now, at trigger time. */
  async trigger(actor: Actor, pipelineId: string): Promise<IngestJob> {
    await requirePipelineAccess(this.db.manager, actor, pipelineId);
    return this.queue.enqueue(pipelineId);
  }

  /** Who may trigger may cancel; the job ends failed "Cancelled by <email>" (job-queue.ts requestCancel). */
  async cancel(actor: Actor, pipelineId: string): Promise<IngestJob> {
    await requirePipelineAccess(this.db.manager, actor, pipelineId);
    return requestCancel(this.db, pipelineId, actor.email);
  }

  /** The newest job of the pipeline, or null when it never ran. */
  async latest(actor: Actor, pipelineId: string): Promise<IngestJob | null> {
    await requirePipelineAccess(this.db.manager, actor, pipelineId);
    return this.db.manager.findOne(IngestJob, { where: { pipelineId }, order: { queueSeq: "DESC" } });
  }
}
