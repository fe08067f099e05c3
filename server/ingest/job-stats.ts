import type { JobStats, TypeStats } from "../data/entities/ingest-job.entity";
import { STAGES, type Stage } from "../data/job-stages";
import { extensionOf, isSupported } from "./parse/file-types";

/**
 * Distinct unsupported file types kept; a source with more lumps the rest under "other", so the
 * row stays small. Types Sluice reads always keep their own entry (there are few): a share of
 * 140 kinds of files listed its PDFs under "other" when every type shared one cap.
 */
const MAX_TYPES = 40;

const rounded = (seconds: number) => Math.round(seconds * 1000) / 1000;

/**
 * Where one job's time goes. Stages the job awaits (listing, read, index, commit) count their
 * busy time: wall time during which at least one operation of the stage was under way, so 32
 * reads in flight for one second count one second, and no stage can exceed the job's wall time.
 * Stages overlap (reads go on while the parser and the index writer work): that overlap is the
 * pipelining, so the figures add up to more than the wall time when it works. Parse and chunk
 * are measured by the parser threads themselves (seconds of parser-thread time, per file).
 * Timers run per file or per batch, never per chunk.
 */
export class JobStatsRecorder {
  private readonly seconds = Object.fromEntries(STAGES.map((s) => [s, 0])) as Record<Stage, number>;
  private readonly inFlight = Object.fromEntries(STAGES.map((s) => [s, 0])) as Record<Stage, number>;
  private readonly busySince = Object.fromEntries(STAGES.map((s) => [s, 0])) as Record<Stage, number>;
  private readonly types = new Map<string, TypeStats>();
  /** Unsupported types with an entry of their own (at most MAX_TYPES). */
  private unsupportedTypes = 0;

  /** now: milliseconds from any fixed origin (tests pass their own clock). */
  constructor(private readonly now: () => number = () => performance.now()) {}

  /** Marks one operation of `stage` under way; call the returned function once when it ends. */
  begin(stage: Stage): () => void {
    if (this.inFlight[stage]++ === 0) this.busySince[stage] = this.now();
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      if (--this.inFlight[stage] === 0) this.seconds[stage] += (this.now() - this.busySince[stage]) / 1000;
    };
  }

  /** Times a promise as one operation of `stage`. */
  async time<T>(stage: Stage, work: () => Promise<T>): Promise<T> {
    const end = this.begin(stage);
    try {
      return await work();
    } finally {
      end();
    }
  }

  /** Seconds measured elsewhere (the parser threads report their own). */
  add(stage: Stage, seconds: number): void {
    if (seconds > 0) this.seconds[stage] += seconds;
  }

  /** One file the job read, skipped or failed (not an unchanged one). */
  file(name: string, fields: { bytes: number; failed?: boolean; parseSeconds?: number }): void {
    let key = extensionOf(name) || "none";
    if (!this.types.has(key) && !isSupported(name)) {
      if (this.unsupportedTypes >= MAX_TYPES) key = "other";
      else this.unsupportedTypes++;
    }
    const entry = this.types.get(key) ?? { files: 0, bytes: 0, failed: 0, parse_s: 0 };
    entry.files += 1;
    entry.bytes += fields.bytes;
    if (fields.failed) entry.failed += 1;
    entry.parse_s += fields.parseSeconds ?? 0;
    this.types.set(key, entry);
  }

  /** The figures so far; a stage under way counts up to now. */
  snapshot(): JobStats {
    const now = this.now();
    const timings = {} as JobStats["timings"];
    for (const stage of STAGES) {
      const running = this.inFlight[stage] > 0 ? (now - this.busySince[stage]) / 1000 : 0;
      timings[`${stage}_s`] = rounded(this.seconds[stage] + running);
    }
    const by_type: JobStats["by_type"] = {};
    for (const [type, t] of [...this.types].sort(([a], [b]) => a.localeCompare(b))) by_type[type] = { ...t, parse_s: rounded(t.parse_s) };
    return { timings, by_type };
  }
}
