import { INDEX_ERROR_KINDS } from "../search/index-damage";
import type { ErrorKinds } from "../threads/wire-error";

export const INTERRUPTED = "Interrupted by shutdown";

/** Thrown into a handler's work when the queue stops: the job is recorded as interrupted. */
export class JobInterrupted extends Error {
  constructor() {
    super(INTERRUPTED);
    this.name = "JobInterrupted";
  }
}

/** The errors a job's callers tell apart by class (a damaged index, an interrupted job), rebuilt as such when they cross from the job thread. */
export const JOB_ERROR_KINDS: ErrorKinds = { ...INDEX_ERROR_KINDS, JobInterrupted: () => new JobInterrupted() };
