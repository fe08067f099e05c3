import { Column, Entity, PrimaryColumn } from "typeorm";

export type JobStatus = "processing" | "completed" | "failed";
/** Where the job is in the queue; the API shows `processing` for both queued and running. */
export type JobRunState = "queued" | "running" | "done";
/** What started a job: a click (POST .../ingest) or the pipeline's schedule. */
export type JobTrigger = "manual" | "schedule";

export interface JobError {
  entity: string;
  message: string;
}

/** Why a file was left out without failing: Sluice reads no text from its type, or it has none. */
/** Skipped files' reasons; the last: a picture or scan with OCR=off (ingest/parse/ocr/ocr-settings.ts). */
export type SkipReason = "type not supported" | "empty" | "needs OCR, which is off (OCR=off)";

export interface JobSkip {
  entity: string;
  reason: SkipReason;
}

import type { Stage } from "../job-stages";
export { STAGES, type Stage } from "../job-stages";

/** Per file type (lower-case extension, "none" without one): files the job read or skipped, bytes read, parser-thread seconds. */
export interface TypeStats {
  files: number;
  bytes: number;
  failed: number;
  parse_s: number;
}

/** What the job row keeps in `stats`: seconds per stage, and counts per file type. */
export interface JobStats {
  timings: Record<`${Stage}_s`, number>;
  by_type: Record<string, TypeStats>;
}

/** A job is a row first: recorded at trigger time and written as it moves, so a crash leaves a true record. */
@Entity({ name: "ingest_jobs" })
export class IngestJob {
  @PrimaryColumn({ type: "varchar" })
  id: string;

  @Column({ type: "varchar", name: "pipeline_id" })
  pipelineId: string;

  @Column({ type: "varchar" })
  status: JobStatus;

  @Column({ type: "varchar", name: "run_state" })
  runState: JobRunState;

  /** Queue order: a monotonically increasing number assigned at trigger time. */
  @Column({ type: "integer", name: "queue_seq" })
  queueSeq: number;

  @Column({ type: "integer", name: "entities_discovered" })
  entitiesDiscovered: number;

  @Column({ type: "integer", name: "entities_processed" })
  entitiesProcessed: number;

  @Column({ type: "integer", name: "entities_failed" })
  entitiesFailed: number;

  @Column({ type: "integer", name: "entities_skipped" })
  entitiesSkipped: number;

  @Column({ type: "integer", name: "bytes_processed" })
  bytesProcessed: number;

  /** What this run changed in the collection: new files, changed files, files gone, files left as they were. */
  @Column({ type: "integer", name: "files_added" })
  filesAdded: number;

  @Column({ type: "integer", name: "files_changed" })
  filesChanged: number;

  @Column({ type: "integer", name: "files_removed" })
  filesRemoved: number;

  @Column({ type: "integer", name: "files_unchanged" })
  filesUnchanged: number;

  /** Of the unchanged files, those whose file-server permissions changed: re-read and updated without reading the content. */
  @Column({ type: "integer", name: "files_permissions_changed" })
  filesPermissionsChanged: number;

  @Column({ type: "varchar" })
  trigger: JobTrigger;

  /** Set once file discovery has finished walking the source, so progress can reach 100. */
  @Column({ type: "boolean", name: "discovery_complete" })
  discoveryComplete: boolean;

  @Column({ type: "varchar", name: "current_entity" })
  currentEntity: string;

  @Column({ type: "varchar", name: "error_message", nullable: true })
  errorMessage: string | null;

  @Column({ type: "simple-json" })
  errors: JobError[];

  /** The first skipped files with their reasons (job-progress.ts bounds the list like errors). */
  @Column({ type: "simple-json" })
  skipped: JobSkip[];

  /**
   * Set by POST .../ingest/cancel on a running job: the row is the signal, so the process running
   * the job sees it whichever API process took the request (runJob polls it).
   */
  @Column({ type: "varchar", name: "cancel_requested_by", nullable: true })
  cancelRequestedBy: string | null;
  /** Where the time went (seconds per stage, counts per file type); null for jobs recorded before it was kept. */
  @Column({ type: "simple-json", nullable: true })
  stats: JobStats | null;

  @Column({ type: Date, name: "created_at" })
  createdAt: Date;

  @Column({ type: Date, name: "started_at" })
  startedAt: Date;

  @Column({ type: Date, name: "completed_at", nullable: true })
  completedAt: Date | null;
}
