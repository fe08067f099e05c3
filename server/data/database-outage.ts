import { setTimeout as sleep } from "node:timers/promises";
import { isDatabaseUnreachable } from "./db-errors";

export const DATABASE_CONNECTION_LOST = "Database connection lost";

/** The database stayed unreachable for longer than the grace (DB_OUTAGE_GRACE_S): the work that needed it fails. */
export class DatabaseConnectionLost extends Error {
  constructor() {
    super(DATABASE_CONNECTION_LOST);
    this.name = "DatabaseConnectionLost";
  }
}

/** Waits between attempts: 250 ms doubling to 5 s, so a restart of a few seconds is noticed quickly. */
function outageBackoffMs(attempt: number): number {
  return Math.min(250 * 2 ** Math.min(attempt, 5), 5_000);
}

/**
 * Rides out a database outage for the ingestion job: a write (or read) that fails because the
 * database is unreachable is tried again with back-off, and the work carries on where it was once
 * the database answers. The outage is timed from its first failure, shared by every call (the job's
 * lanes all wait on the same outage), and cleared by any success; past `graceMs` the calls fail
 * with DatabaseConnectionLost. Other errors pass through untouched. One per process.
 */
export class DatabaseOutage {
  /** When the current outage was first seen; null while the database answers. */
  private since: number | null = null;

  constructor(
    readonly graceMs: number,
    private readonly onOutage: (message: string) => void = () => undefined,
  ) {}

  /** Runs fn, retrying through an outage of up to graceMs; an aborted signal stops the waiting (its reason is thrown). */
  async run<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        const value = await fn();
        this.recovered();
        return value;
      } catch (error) {
        if (!isDatabaseUnreachable(error)) throw error;
        const waited = this.note(error);
        if (waited >= this.graceMs) throw new DatabaseConnectionLost();
        await sleep(Math.min(outageBackoffMs(attempt), this.graceMs - waited), undefined, { signal });
      }
    }
  }

  /**
   * Runs fn until the database answers, however long that takes: for recording how a job ended,
   * which must reach the database or the row would claim the job still runs. When
   * the signal stops the waiting first (shutdown: the next start records the job interrupted).
   * Answers fn's value, wrapped, or null when the signal stopped the waiting first.
   */
  async untilReachable<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<{ value: T } | null> {
    for (let attempt = 0; ; attempt++) {
      try {
        const value = await fn();
        this.recovered();
        return { value };
      } catch (error) {
        // A write inside fn may have given up already (its own grace): still an outage here.
        if (!(error instanceof DatabaseConnectionLost) && !isDatabaseUnreachable(error)) throw error;
        this.note(error);
        try {
          await sleep(outageBackoffMs(attempt), undefined, { signal });
        } catch {
          return null;
        }
      }
    }
  }

  /** Records a failure; answers how long the outage has lasted. */
  private note(error: unknown): number {
    if (this.since === null) {
      this.since = Date.now();
      this.onOutage(`the database is unreachable (${(error as Error)?.message}); retrying for up to ${Math.round(this.graceMs / 1000)} s`);
    }
    return Date.now() - this.since;
  }

  private recovered(): void {
    if (this.since === null) return;
    this.onOutage(`the database is reachable again after ${Math.round((Date.now() - this.since) / 1000)} s`);
    this.since = null;
  }
}
