/** The state of one model pull as the Models page shows it, built from the POST /models events. */
import type * as api from "../api";

export type PullPhase = "starting" | "downloading" | "benchmarking" | "completed" | "present" | "cancelled" | "failed";

export interface PullState {
  model: string;
  phase: PullPhase;
  /** The whole download (every layer seen yet). */
  completedBytes: number;
  totalBytes: number;
  layers: Record<string, { completed: number; total: number }>;
  /** Recent (time, bytes) samples, for the speed. */
  samples: Array<{ at: number; bytes: number }>;
  /** A retry under way, in user words. */
  retrying: string | null;
  /** Why it ended, when it did not complete. */
  error: string | null;
  /** The model server stopped answering: the page says so once, in its banner. */
  serverDown: boolean;
  cancelMessage: string | null;
  record: api.CatalogModel | null;
}

/** Speed is measured over this window, so one slow line does not swing it. */
const SPEED_WINDOW_MS = 8000;

export function startingPull(model: string): PullState {
  return { model, phase: "starting", completedBytes: 0, totalBytes: 0, layers: {}, samples: [], retrying: null, error: null, serverDown: false, cancelMessage: null, record: null };
}

export function isRunning(s: PullState | null): boolean {
  return !!s && (s.phase === "starting" || s.phase === "downloading" || s.phase === "benchmarking");
}

/** The next state after one event of the stream. */
export function applyPullEvent(s: PullState, event: api.PullEvent, now: number): PullState {
  if (event.status.startsWith("pulling ") && typeof event.total === "number") {
    const layer = event.digest ?? event.status.slice("pulling ".length);
    const layers = { ...s.layers, [layer]: { completed: event.completed ?? 0, total: event.total } };
    const summed = Object.values(layers).reduce((a, l) => ({ completed: a.completed + l.completed, total: a.total + l.total }), { completed: 0, total: 0 });
    const completedBytes = event.completed_bytes ?? summed.completed;
    const totalBytes = event.total_bytes ?? summed.total;
    const samples = [...s.samples, { at: now, bytes: completedBytes }].filter((p) => now - p.at <= SPEED_WINDOW_MS);
    return { ...s, phase: "downloading", layers, completedBytes, totalBytes, samples, retrying: null };
  }
  switch (event.status) {
    case "retrying":
      return { ...s, retrying: `The download was interrupted; trying again (attempt ${event.attempt ?? "?"} of ${event.max_attempts ?? "?"})…` };
    case "benchmarking":
      return { ...s, phase: "benchmarking", retrying: null };
    case "completed":
      return event.model ? { ...s, phase: event.already_present ? "present" : "completed", record: event.model } : s;
    case "cancelled":
      return { ...s, phase: "cancelled", cancelMessage: event.download_stopped ? "Pull cancelled. Pulling it again later picks up where it stopped." : "You left this pull. It goes on for the others who asked for it." };
    case "error":
      return event.code === "model_server_unreachable"
        ? { ...s, phase: "failed", serverDown: true }
        : { ...s, phase: "failed", error: `The pull of ${s.model} failed: ${event.error ?? "the model server gave no reason"}.` };
    default:
      return s;
  }
}

/** Bytes per second over the recent window, or null until there is enough to tell. */
export function speedOf(s: PullState): number | null {
  if (s.samples.length < 2) return null;
  const first = s.samples[0];
  const last = s.samples[s.samples.length - 1];
  const seconds = (last.at - first.at) / 1000;
  return seconds >= 0.5 ? (last.bytes - first.bytes) / seconds : null;
}
