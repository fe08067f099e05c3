import type { ModelRecord } from "../data/entities/model.entity";

/** One event of the POST /models stream (docs/decisions.md: Model pull events); which fields it carries depends on its status. */
export interface PullEvent {
  /** "pulling <layer>", "retrying", "benchmarking", "completed" or "error". */
  status: string;
  /** Layer progress. */
  digest?: string;
  total?: number;
  completed?: number;
  /** benchmarking */
  message?: string;
  /** retrying */
  attempt?: number;
  max_attempts?: number;
  /** retrying and error */
  error?: string;
  /** completed: the catalog record, presented on the way out. */
  model?: ModelRecord;
}

export type Subscriber = (event: PullEvent) => void;

/** A download (and benchmark) under way, shared by every caller asking for the same model. */
export class RunningPull {
  /** The latest event per layer (or per phase), in first-seen order: what a late joiner is shown first. */
  private readonly latest = new Map<string, PullEvent>();
  private readonly subscribers = new Set<Subscriber>();
  private finalEvent: PullEvent | null = null;
  readonly controller = new AbortController();
  done: Promise<void> = Promise.resolve();

  constructor(readonly modelName: string) {}

  get finished(): boolean {
    return this.finalEvent !== null;
  }

  get subscriberCount(): number {
    return this.subscribers.size;
  }

  emit(event: PullEvent): void {
    if (this.finalEvent) return;
    const key = typeof event.digest === "string" ? `layer ${event.digest}` : event.status;
    this.latest.delete(key);
    this.latest.set(key, event);
    for (const subscriber of [...this.subscribers]) subscriber(event);
  }

  /** The last event (completed or error); later subscribers get just this. */
  finish(event: PullEvent): void {
    if (this.finalEvent) return;
    this.finalEvent = event;
    for (const subscriber of [...this.subscribers]) subscriber(event);
    this.subscribers.clear();
  }

  /** Replays the current state, then delivers live events; returns the unsubscribe function. */
  subscribe(subscriber: Subscriber): () => void {
    if (this.finalEvent) {
      subscriber(this.finalEvent);
      return () => undefined;
    }
    for (const event of this.latest.values()) subscriber(event);
    this.subscribers.add(subscriber);
    return () => this.subscribers.delete(subscriber);
  }
}

/** model name -> its running pull. A pull leaves the map when it ends, so the next request starts a fresh one. */
export class PullRegistry {
  private readonly running = new Map<string, RunningPull>();

  /** The running pull for the model, or a new one started by `start` (which must not throw). */
  attach(modelName: string, start: (pull: RunningPull) => Promise<void>): RunningPull {
    const existing = this.running.get(modelName);
    // A pull that has ended but not yet left the map (team mode releases its lock first) gets no new callers.
    if (existing && !existing.finished) return existing;
    const pull = new RunningPull(modelName);
    this.running.set(modelName, pull);
    pull.done = start(pull).finally(() => {
      if (this.running.get(modelName) === pull) this.running.delete(modelName);
    });
    return pull;
  }

  get(modelName: string): RunningPull | undefined {
    return this.running.get(modelName);
  }

  all(): RunningPull[] {
    return [...this.running.values()];
  }
}
