export const INTERRUPTED = "Interrupted by shutdown";

/** Thrown into a handler's work when the queue stops: the job is recorded as interrupted. */
export class JobInterrupted extends Error {
  constructor() {
    super(INTERRUPTED);
    this.name = "JobInterrupted";
  }
}
