import crypto from "node:crypto";
import type { DataSource } from "typeorm";
import { BadRequestError } from "../errors";
import { IngestJob } from "../data/entities/ingest-job.entity";
import { Pipeline } from "../data/entities/pipeline.entity";
import { accessiblePipelines, assertCanConnect, requirePipelineAccess } from "../access/access";
import type { Actor } from "../access/actor";
import { withDetails, type PipelineView } from "./pipeline-details";

export interface NewPipeline {
  name: string;
  description: string;
  dataSourceId: string;
  collectionId: string;
}

export class PipelinesService {
  constructor(private readonly db: DataSource) {}

  /** 404 without access to both ends; 400 for a second pipeline on the same (source, collection) pair. */
  async create(actor: Actor, input: NewPipeline): Promise<Pipeline> {
    return this.db.transaction(async (tx) => {
      await assertCanConnect(tx, actor, input.dataSourceId, input.collectionId);
      if (await tx.exists(Pipeline, { where: { dataSourceId: input.dataSourceId, collectionId: input.collectionId } })) {
        throw new BadRequestError("A pipeline already connects this data source to this collection");
      }
      const pipeline = tx.create(Pipeline, { id: crypto.randomUUID(), ...input, status: "inactive", createdAt: new Date() });
      await tx.insert(Pipeline, pipeline);
      return pipeline;
    });
  }

  /** With each pipeline's schedule and latest job. */
  async list(actor: Actor): Promise<PipelineView[]> {
    return withDetails(this.db.manager, await accessiblePipelines(this.db.manager, actor));
  }

  async get(actor: Actor, pipelineId: string): Promise<PipelineView> {
    return (await withDetails(this.db.manager, [await requirePipelineAccess(this.db.manager, actor, pipelineId)]))[0];
  }

  /** The pipeline's jobs, newest first. */
  async jobs(actor: Actor, pipelineId: string): Promise<IngestJob[]> {
    await requirePipelineAccess(this.db.manager, actor, pipelineId);
    return this.db.manager.find(IngestJob, { where: { pipelineId }, order: { queueSeq: "DESC" } });
  }
}
