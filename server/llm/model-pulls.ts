import type { ModelRecord } from "../data/entities/model.entity";

/** Why a pull ended in an error, for clients to put in their own words (docs/decisions/0145-model-server-status-and-words.md). */
export type PullErrorCode = "model_server_unreachable";

/** One event of the POST /models stream (docs/decisions/0006-model-pull-events.md); which fields it carries depends on its status. */
export interface PullEvent {
  /** "pulling <layer>", "retrying", "benchmarking", "completed", "cancelled" or "error". */
  status: string;
  /** Layer progress. */
  digest?: string;
  total?: number;
  completed?: number;
  /** pulling: the whole download so far, over every layer seen yet (layers show up one after another). */
  completed_bytes?: number;
  total_bytes?: number;
  /** benchmarking and cancelled */
  message?: string;
  /** retrying */
  attempt?: number;
  max_attempts?: number;
  /** retrying and error */
  error?: string;
  /** error: a known cause (absent for others). */
  code?: PullErrorCode;
  /** completed: the catalog record, presented on the way out. */
  model?: ModelRecord;
  /** completed: the model was in the catalog already and nothing was downloaded. */
  already_present?: boolean;
  /** cancelled: the download itself stopped (nobody else was waiting for it). */
  download_stopped?: boolean;
}

export type Subscriber = (event: PullEvent) => void;

export const isFinalEvent = (event: PullEvent): boolean => event.status === "completed" || event.status === "error" || event.status === "cancelled";

/** A download (and benchmark) under way, shared by every caller asking for the same model. */
export class RunningPull {
  /** The latest event per layer (or per phase), in first-seen order: what a late joiner is shown first. */
  private readonly latest = new Map<string, PullEvent>();
  /** Bytes per layer, for the overall figures every layer event carries. */
  private readonly layerBytes = new Map<string, { completed: number; total: number }>();
  /** Each live stream, with the user it belongs to. */
  private readonly subscribers = new Map<Subscriber, string | undefined>();
  /** Users who asked for this pull here and have not cancelled: the pull is theirs until it ends. */
  readonly requesters = new Set<string>();
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
    if (typeof event.digest === "string") event = this.withOverall(event);
    const key = typeof event.digest === "string" ? `layer ${event.digest}` : event.status;
    this.latest.delete(key);
    this.latest.set(key, event);
    for (const subscriber of [...this.subscribers.keys()]) subscriber(event);
  }

  /** The last event (completed, cancelled or error); later subscribers get just this. */
  finish(event: PullEvent): void {
    if (this.finalEvent) return;
    this.finalEvent = event;
    for (const subscriber of [...this.subscribers.keys()]) subscriber(event);
    this.subscribers.clear();
  }

  /** Replays the current state, then delivers live events; returns the unsubscribe function. */
  subscribe(subscriber: Subscriber, userId?: string): () => void {
    if (this.finalEvent) {
      subscriber(this.finalEvent);
      return () => undefined;
    }
    for (const event of this.latest.values()) subscriber(event);
    this.subscribers.set(subscriber, userId);
    return () => this.subscribers.delete(subscriber);
  }

  /** Ends one user's streams with `event`; the pull goes on for everyone else. */
  detach(userId: string, event: PullEvent): void {
    this.requesters.delete(userId);
    for (const [subscriber, owner] of [...this.subscribers]) {
      if (owner !== userId) continue;
      this.subscribers.delete(subscriber);
      subscriber(event);
    }
  }

  /** Stops the download: the final event goes to whoever is still listening, and the upstream request is aborted. */
  cancel(event: PullEvent): void {
    this.finish(event);
    this.controller.abort();
  }

  private withOverall(event: PullEvent): PullEvent {
    this.layerBytes.set(event.digest!, { completed: event.completed ?? 0, total: event.total ?? 0 });
    let completed = 0;
    let total = 0;
    for (const layer of this.layerBytes.values()) {
      completed += layer.completed;
      total += layer.total;
    }
    return { ...event, completed_bytes: completed, total_bytes: total };
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

  /** The model's pull under way here, if any (one that has ended does not count). */
  get(modelName: string): RunningPull | undefined {
    const pull = this.running.get(modelName);
    return pull && !pull.finished ? pull : undefined;
  }

  all(): RunningPull[] {
    return [...this.running.values()];
  }
}
