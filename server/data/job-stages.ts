/**
 * The stages of an ingestion, in pipeline order (docs/decisions/0063-job-stage-timings.md).
 * Apart from the entity so an ingestion job's own thread can time them without loading TypeORM.
 */
export const STAGES = ["listing", "read", "parse", "ocr", "chunk", "index", "commit"] as const;
export type Stage = (typeof STAGES)[number];
