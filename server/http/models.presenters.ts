import type { ModelRecord } from "../data/entities/model.entity";
import type { LibraryEntry } from "../llm/library-entry";
import type { PullEvent } from "../llm/model-pulls";
import type { ModelServerStatus } from "../llm/model-server-status";
import type { PersonalModel } from "../llm/personal-model";
import { isoNoZone } from "../time";

/** POST /models/library/refresh: how many models the reloaded library holds, and when it was read. */
export function presentLibraryRefresh(refreshed: { count: number; refreshedAt: Date }) {
  return { count: refreshed.count, refreshed_at: isoNoZone(refreshed.refreshedAt) };
}

/** A model of the organisation's catalog. */
export function presentModel(m: ModelRecord) {
  return {
    id: m.id,
    model_name: m.modelName,
    total_tokens_processed: m.totalTokensProcessed,
    tokens_per_second: m.tokensPerSecond,
    time_to_first_token_ms: m.timeToFirstTokenMs,
    size_bytes: m.sizeBytes,
    digest: m.digest,
    family: m.family,
    parameter_size: m.parameterSize,
    quantization: m.quantization,
    pulled_at: isoNoZone(m.pulledAt),
    benchmarked_at: isoNoZone(m.benchmarkedAt),
    capabilities: m.capabilities,
  };
}

export function presentPersonalModel({ record, modelName }: PersonalModel) {
  return {
    id: record.id,
    model_name: modelName,
    hardware_notes: record.hardwareNotes,
    created_at: isoNoZone(record.createdAt),
    updated_at: isoNoZone(record.updatedAt),
  };
}

export function presentLibraryEntry(e: LibraryEntry) {
  return {
    name: e.name,
    description: e.description,
    capabilities: e.capabilities,
    sizes: e.sizes,
    pulls: e.pulls,
    updated_at: e.updated_at,
  };
}

/** One event of the POST /models stream; a completed event carries the presented catalog record. */
export function presentPullEvent({ model, ...event }: PullEvent): Omit<PullEvent, "model"> & { model?: ReturnType<typeof presentModel> } {
  return model ? { ...event, model: presentModel(model) } : event;
}

/** GET /models/server: whether the model server answers, before anyone pulls. */
export function presentModelServerStatus(s: ModelServerStatus) {
  return { reachable: s.reachable, version: s.version, on_this_machine: s.onThisMachine };
}

/** POST /models/cancel */
export function presentCancelledPull(c: { modelName: string; downloadStopped: boolean }) {
  return { model_name: c.modelName, download_stopped: c.downloadStopped };
}
