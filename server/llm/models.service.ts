import crypto from "node:crypto";
import fs from "node:fs";
import type { DataSource } from "typeorm";
import { personalModelsOf, requirePersonalModel } from "../access/access";
import type { Actor } from "../access/actor";
import { ConflictError, HttpError, NotFoundError, ServiceUnavailableError } from "../errors";
import { ModelRecord } from "../data/entities/model.entity";
import { UserModelRecord } from "../data/entities/user-model.entity";
import type { Logger } from "../logger";
import { loadLibrary, parseCatalog, refreshedCatalogPath, type LibraryEntry, type ModelLibrary } from "./model-library";
import { isThisMachineOnlyHost } from "../net/local-addresses";
import type { ModelServerStatus } from "./model-server-status";
import { PullRegistry, type PullEvent, type RunningPull } from "./model-pulls";
import type { ModelsOptions } from "./models.options";
import { checkModelRegistry } from "./model-registry";
import type { PersonalModel } from "./personal-model";
import type { SharedPulls } from "./shared-pulls";
import { canonicalModelName, OllamaClient, OllamaError, OllamaUnreachableError, type GenerateTimings, type PullProgress } from "./ollama.client";

/** A failed download is retried automatically twice (docs/decisions/0002-limits.md). */
const PULL_ATTEMPTS = 3;
/** The fixed benchmark: same prompt, greedy decoding, bounded output, so runs compare. */
const BENCHMARK_PROMPT = "Explain in three short paragraphs how a hydroelectric sluice gate controls the flow of water.";
const BENCHMARK_OPTIONS = { temperature: 0, seed: 42, num_predict: 128 };

/** How long the model server gets to say its version before it counts as not running. */
const STATUS_TIMEOUT_MS = 3000;

const SHUTDOWN_ERROR = "The server is shutting down; call POST /models again to resume the download";

export class ModelsService {
  readonly library: ModelLibrary;
  readonly ollama: OllamaClient;
  private readonly pulls = new PullRegistry();
  private closing = false;

  constructor(
    private readonly db: DataSource,
    readonly options: ModelsOptions,
    private readonly logger?: Logger,
    /** Team mode: one upstream pull per model across API processes. */
    private readonly shared?: SharedPulls,
  ) {
    this.library = loadLibrary(options.dataDir);
    this.ollama = new OllamaClient(options.ollamaHost.replace(/\/$/, ""));
  }

  // ---- library ----

  searchLibrary(q: string, topK: number): LibraryEntry[] {
    return this.library.search(q, topK);
  }

  /** Replaces the library with the catalog at MODEL_LIBRARY_URL and keeps a copy under DATA_DIR. */
  async refreshLibrary(): Promise<{ count: number; refreshedAt: Date }> {
    const url = this.options.libraryUrl;
    if (!url) throw new ServiceUnavailableError("No model library URL is configured (set MODEL_LIBRARY_URL)");
    let raw: unknown;
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(30_000) });
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      raw = await res.json();
    } catch (error) {
      throw new ServiceUnavailableError(`The model library at ${url} could not be fetched (${(error as Error).message})`);
    }
    let entries: LibraryEntry[];
    try {
      entries = parseCatalog(raw);
    } catch (error) {
      throw new HttpError(502, `The model library at ${url} is not a valid catalog: ${(error as Error).message}`);
    }
    this.library.replace(entries);
    if (this.options.dataDir) {
      const target = refreshedCatalogPath(this.options.dataDir);
      fs.writeFileSync(`${target}.tmp`, JSON.stringify({ models: entries }));
      fs.renameSync(`${target}.tmp`, target);
    }
    return { count: this.library.size, refreshedAt: this.library.refreshedAt };
  }

  // ---- pulls ----

  async serverStatus(): Promise<ModelServerStatus> {
    const version = await this.ollama.version(STATUS_TIMEOUT_MS);
    return { reachable: version !== null, version: version || null, onThisMachine: isThisMachineOnlyHost(new URL(this.ollama.host).hostname) };
  }

  /**
   * Joins the running pull of this model, or starts one; the pull runs on when its callers go
   * away, and belongs to everyone who asked until they cancel. A model that is in the catalog and
   * on the model server is not downloaded again unless `update` asks for it: the answer is its record.
   */
  async pull(actor: Actor, rawName: string, update = false): Promise<RunningPull | ModelRecord> {
    checkModelRegistry(rawName, this.options.registries);
    const name = canonicalModelName(rawName);
    if (!update && !this.pulls.get(name)) {
      const existing = await this.db.manager.findOneBy(ModelRecord, { modelName: name });
      if (existing && (await this.ollama.installed(name).catch(() => null))) return existing;
    }
    await this.shared?.addRequester(name, actor.userId);
    const pull = this.attach(name);
    pull.requesters.add(actor.userId);
    return pull;
  }

  private attach(name: string): RunningPull {
    if (!this.shared) return this.pulls.attach(name, (pull) => this.runPull(pull));
    const shared = this.shared;
    return this.pulls.attach(name, (pull) =>
      shared
        .run(pull, () => this.runPull(pull), (notice) => this.withdraw(pull, notice.user_id, notice.stop))
        .catch((error: Error) => {
          this.logger?.error(`pull of ${pull.modelName} failed: ${error.message}`);
          pull.finish({ status: "error", error: "The model pull could not be coordinated through Redis" });
        }),
    );
  }

  /**
   * Withdraws the caller from the model's pull: their streams end with `cancelled`. The download
   * itself stops only when nobody else who asked for it is still waiting (docs/decisions/0144-model-pull-cancel.md).
   */
  async cancel(actor: Actor, rawName: string): Promise<{ modelName: string; downloadStopped: boolean }> {
    const name = canonicalModelName(rawName);
    const notPulling = new NotFoundError(`You have no pull of ${name} under way`);
    if (this.shared) {
      const result = await this.shared.cancel(name, actor.userId);
      if (!result) throw notPulling;
      return { modelName: name, downloadStopped: result.stopped };
    }
    const pull = this.pulls.get(name);
    if (!pull?.requesters.has(actor.userId)) throw notPulling;
    const stop = pull.requesters.size === 1;
    this.withdraw(pull, actor.userId, stop);
    return { modelName: name, downloadStopped: stop };
  }

  private withdraw(pull: RunningPull, userId: string, stop: boolean): void {
    const event: PullEvent = {
      status: "cancelled",
      download_stopped: stop,
      message: stop
        ? `The pull of ${pull.modelName} was cancelled and its download stopped; pulling it again resumes where it stopped`
        : `You left the pull of ${pull.modelName}; the download goes on for others who asked for it`,
    };
    pull.detach(userId, event);
    if (stop) pull.cancel(event);
  }

  private async runPull(pull: RunningPull): Promise<void> {
    try {
      if (this.closing) return pull.finish({ status: "error", error: SHUTDOWN_ERROR });
      for (let attempt = 1; ; attempt++) {
        try {
          // Only layer progress goes out: manifest, verification and "success" lines are Ollama's internals.
          await this.ollama.pull(pull.modelName, (p) => {
            if (p.digest) pull.emit(layerEvent({ ...p, digest: p.digest }));
          }, pull.controller.signal);
          break;
        } catch (error) {
          if (pull.controller.signal.aborted) return pull.finish({ status: "error", error: SHUTDOWN_ERROR });
          const message = error instanceof OllamaError ? error.message : `The download failed (${(error as Error).message})`;
          const permanent = error instanceof OllamaError && error.permanent && !(error instanceof OllamaUnreachableError);
          if (permanent || attempt >= PULL_ATTEMPTS) {
            this.logger?.warn(`pull of ${pull.modelName} failed after ${attempt} attempt(s): ${message}`);
            return pull.finish(errorEvent(message, error));
          }
          pull.emit({ status: "retrying", attempt: attempt + 1, max_attempts: PULL_ATTEMPTS, error: message });
          await sleep(this.options.retryDelayMs * 2 ** (attempt - 1), pull.controller.signal);
          if (pull.controller.signal.aborted) return pull.finish({ status: "error", error: SHUTDOWN_ERROR });
        }
      }
      pull.emit({ status: "benchmarking", message: `Downloaded ${pull.modelName}; measuring generation speed with a fixed prompt` });
      const record = await this.benchmarkAndRecord(pull.modelName);
      if (pull.controller.signal.aborted) return pull.finish({ status: "error", error: SHUTDOWN_ERROR });
      pull.finish({ status: "completed", model: record });
    } catch (error) {
      const message = error instanceof OllamaError ? error.message : "The model was downloaded but could not be registered";
      this.logger?.error(`pull of ${pull.modelName} failed: ${(error as Error).message}`);
      pull.finish(errorEvent(message, error));
    }
  }

  /** Reads size, digest and details from the model server, times one generation and upserts the catalog record. */
  private async benchmarkAndRecord(modelName: string): Promise<ModelRecord> {
    const pulledAt = new Date();
    const [details, installed] = await Promise.all([this.ollama.show(modelName), this.ollama.installed(modelName)]);
    let timings: GenerateTimings | null = null;
    const generates = details.capabilities.length === 0 || details.capabilities.includes("completion");
    if (generates) {
      try {
        timings = await this.ollama.generate(modelName, BENCHMARK_PROMPT, BENCHMARK_OPTIONS);
      } catch (error) {
        if (error instanceof OllamaUnreachableError) throw error;
        this.logger?.warn(`benchmark of ${modelName} failed: ${(error as Error).message}`);
      }
    }
    const stats = benchmarkStats(timings);
    return this.db.transaction(async (tx) => {
      const existing = await tx.findOneBy(ModelRecord, { modelName });
      const record = tx.create(ModelRecord, {
        id: existing?.id ?? crypto.randomUUID(),
        modelName,
        ...stats,
        sizeBytes: installed?.size ?? 0,
        digest: installed?.digest ?? "",
        family: details.family,
        parameterSize: details.parameterSize,
        quantization: details.quantization,
        pulledAt,
        benchmarkedAt: timings ? new Date() : null,
        capabilities: details.capabilities.length > 0 ? details.capabilities : null,
      });
      await tx.save(ModelRecord, record);
      return record;
    });
  }

  /** Ends every running pull (their streams get an error event) and waits for them to stop. */
  async close(): Promise<void> {
    this.closing = true;
    const running = this.pulls.all();
    for (const pull of running) {
      pull.controller.abort();
      pull.finish({ status: "error", error: SHUTDOWN_ERROR });
    }
    await Promise.allSettled(running.map((pull) => pull.done));
  }

  // ---- catalog ----

  list(): Promise<ModelRecord[]> {
    return this.db.manager.find(ModelRecord, { order: { modelName: "ASC" } });
  }

  /** Removes the model from the model server first, then from the catalog and every personal list. */
  async delete(id: string): Promise<void> {
    const model = await this.db.manager.findOneBy(ModelRecord, { id });
    if (!model) throw new NotFoundError("Model not found");
    try {
      await this.ollama.delete(model.modelName);
    } catch (error) {
      if (error instanceof OllamaUnreachableError) throw new ServiceUnavailableError(`${error.message}; the model was not removed`);
      throw new HttpError(502, `The model server could not remove ${model.modelName}: ${(error as Error).message}`);
    }
    await this.db.transaction(async (tx) => {
      await tx.delete(UserModelRecord, { modelId: id });
      await tx.delete(ModelRecord, { id });
    });
  }

  // ---- personal lists ----

  async addMine(actor: Actor, rawName: string, hardwareNotes: string): Promise<PersonalModel> {
    return this.db.transaction(async (tx) => {
      const model = await tx.findOneBy(ModelRecord, { modelName: canonicalModelName(rawName) });
      if (!model) throw notInCatalog(rawName);
      if ((await personalModelsOf(tx, actor, model.id)).length > 0) {
        throw new ConflictError(`${model.modelName} is already in your list`);
      }
      const now = new Date();
      const record = tx.create(UserModelRecord, { id: crypto.randomUUID(), userId: actor.userId, modelId: model.id, hardwareNotes, createdAt: now, updatedAt: now });
      await tx.insert(UserModelRecord, record);
      return { record, modelName: model.modelName };
    });
  }

  async listMine(actor: Actor): Promise<PersonalModel[]> {
    const records = await personalModelsOf(this.db.manager, actor);
    const models = await this.db.manager.find(ModelRecord);
    const names = new Map(models.map((m) => [m.id, m.modelName]));
    return records.filter((r) => names.has(r.modelId)).map((record) => ({ record, modelName: names.get(record.modelId)! }));
  }

  async updateMine(actor: Actor, rawName: string, hardwareNotes: string): Promise<PersonalModel> {
    return this.db.transaction(async (tx) => {
      const model = await tx.findOneBy(ModelRecord, { modelName: canonicalModelName(rawName) });
      if (!model) throw notInCatalog(rawName);
      const [record] = await personalModelsOf(tx, actor, model.id);
      if (!record) throw new NotFoundError(`${model.modelName} is not in your list`);
      record.hardwareNotes = hardwareNotes;
      record.updatedAt = new Date();
      await tx.update(UserModelRecord, { id: record.id }, { hardwareNotes, updatedAt: record.updatedAt });
      return { record, modelName: model.modelName };
    });
  }

  /** Another user's record id answers 404 like an unknown one. */
  async deleteMine(actor: Actor, recordId: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      const record = await requirePersonalModel(tx, actor, recordId);
      await tx.delete(UserModelRecord, { id: record.id });
    });
  }
}

function notInCatalog(rawName: string): NotFoundError {
  return new NotFoundError(`${canonicalModelName(rawName)} is not in the model catalog; pull it first with POST /models`);
}

/** The stream's error event; an unreachable model server is named by a code, so clients can say it in their own words. */
function errorEvent(message: string, cause: unknown): PullEvent {
  return cause instanceof OllamaUnreachableError ? { status: "error", error: message, code: "model_server_unreachable" } : { status: "error", error: message };
}

/** `pulling <layer>` with completed/total bytes (Ollama omits completed before the first byte). */
function layerEvent(p: PullProgress & { digest: string }): PullEvent {
  const status = p.status.startsWith("pulling ") ? p.status : `pulling ${p.digest.replace(/^sha256:/, "").slice(0, 12)}`;
  return { status, digest: p.digest, total: p.total ?? 0, completed: p.completed ?? 0 };
}

/**
 * Generation speed counts only the output phase (eval_count / eval_duration): load time
 * and prompt evaluation are excluded. Time to first token is prompt evaluation plus one
 * output token, with the model already loaded.
 */
export function benchmarkStats(t: GenerateTimings | null): Pick<ModelRecord, "totalTokensProcessed" | "tokensPerSecond" | "timeToFirstTokenMs"> {
  if (!t) return { totalTokensProcessed: 0, tokensPerSecond: 0, timeToFirstTokenMs: null };
  const tokensPerSecond = t.eval_count > 0 && t.eval_duration > 0 ? t.eval_count / (t.eval_duration / 1e9) : 0;
  const perToken = t.eval_count > 0 ? t.eval_duration / t.eval_count : 0;
  return {
    totalTokensProcessed: t.prompt_eval_count + t.eval_count,
    tokensPerSecond: Math.round(tokensPerSecond * 100) / 100,
    timeToFirstTokenMs: Math.round(((t.prompt_eval_duration + perToken) / 1e6) * 10) / 10,
  };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    }, { once: true });
  });
}
