import { useMutation } from "@tanstack/react-query";
import { useMemo, useState, type FormEvent } from "react";
import { Cron } from "croner";
import type * as api from "../api";
import { client, invalidate, keys } from "../api";
import { ErrorText } from "../components";
import { formatTime } from "../format";
import { MIN_EVERY_MINUTES } from "../names";

/** The presets the control offers; "custom" takes any five-field cron pattern, "interval" every N minutes. */
const PRESETS = [
  { id: "hourly", label: "Hourly (on the hour)", cron: "0 * * * *" },
  { id: "nightly", label: "Nightly at 02:00", cron: "0 2 * * *" },
  { id: "weekdays", label: "Weekdays at 02:00", cron: "0 2 * * 1-5" },
  { id: "custom", label: "Custom cron pattern", cron: null },
  { id: "interval", label: "Every N minutes", cron: null },
] as const;
type PresetId = (typeof PRESETS)[number]["id"];

const localZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";

/** "Mon 25 Nov 2026, 02:00 (Europe/Berlin)": a run time in plain words, in the schedule's time zone. */
function formatRunTime(date: Date, timeZone: string): string {
  const parts: Record<string, string> = Object.fromEntries(
    new Intl.DateTimeFormat("en-GB", { timeZone, weekday: "short", day: "numeric", month: "short", year: "numeric", hour: "2-digit", minute: "2-digit", hourCycle: "h23" })
      .formatToParts(date)
      .map((p) => [p.type, p.value]),
  );
  return `${parts.weekday} ${parts.day} ${parts.month} ${parts.year}, ${parts.hour}:${parts.minute} (${timeZone})`;
}

/** The next three runs of a pattern, or what is wrong with it (the server checks again on save). */
function preview(cron: string, timeZone: string): { runs: string[] } | { problem: string } {
  const fields = cron.trim().split(/\s+/).filter(Boolean);
  if (fields.length !== 5) return { problem: `A cron pattern has five fields (minute hour day-of-month month day-of-week); this one has ${fields.length}.` };
  try {
    new Intl.DateTimeFormat("en", { timeZone });
  } catch {
    return { problem: `Unknown time zone ${timeZone}: use an IANA name such as Europe/Berlin.` };
  }
  try {
    const runs = new Cron(cron.trim(), { timezone: timeZone, paused: true }).nextRuns(3);
    if (runs.length === 0) return { problem: "This pattern never matches a date." };
    return { runs: runs.map((d) => formatRunTime(d, timeZone)) };
  } catch (error) {
    return { problem: `Not a valid cron pattern: ${String((error as Error).message).replace(/^CronPattern:\s*/, "")}` };
  }
}

/** A schedule has either a cron pattern or an interval. */
const cronOf = (s: api.PipelineSchedule | null) => (s && "cron" in s ? s.cron : null);
const minutesOf = (s: api.PipelineSchedule | null) => (s && "every_minutes" in s ? s.every_minutes : null);

/** The schedule in one line: what, and when next. */
export function describeSchedule(schedule: api.PipelineSchedule | null): string {
  if (!schedule) return "Not scheduled";
  const cron = cronOf(schedule);
  const preset = PRESETS.find((p) => p.cron !== null && p.cron === cron);
  const what = cron === null ? `Every ${minutesOf(schedule)} minutes` : preset ? `${preset.label} (${schedule.timezone})` : `Cron ${cron} (${schedule.timezone})`;
  if (schedule.paused) return `${what} · paused`;
  return `${what} · next run ${formatTime(schedule.next_run_at)}`;
}

function presetOf(schedule: api.PipelineSchedule | null): PresetId {
  if (!schedule) return "nightly";
  const cron = cronOf(schedule);
  if (cron === null) return "interval";
  return PRESETS.find((p) => p.cron === cron)?.id ?? "custom";
}

/** Sets, pauses, resumes and removes a pipeline's schedule. */
export function ScheduleControl({ pipeline }: { pipeline: api.Pipeline }) {
  const schedule = pipeline.schedule;
  const idBase = `schedule-${pipeline.id}`;
  const [preset, setPreset] = useState<PresetId>(presetOf(schedule));
  const [cron, setCron] = useState(cronOf(schedule) ?? "0 2 * * *");
  const [minutes, setMinutes] = useState(String(minutesOf(schedule) ?? 60));
  const [timeZone, setTimeZone] = useState(schedule?.timezone ?? localZone());
  const chosen = PRESETS.find((p) => p.id === preset)!;
  const pattern = chosen.cron ?? cron;
  const isInterval = preset === "interval";
  const minutesNumber = Number(minutes);
  const minutesProblem = !Number.isInteger(minutesNumber) || minutesNumber < MIN_EVERY_MINUTES ? `Enter a whole number of minutes, at least ${MIN_EVERY_MINUTES}.` : null;
  const cronPreview = useMemo(() => (isInterval ? null : preview(pattern, timeZone.trim())), [isInterval, pattern, timeZone]);
  const problem = isInterval ? minutesProblem : cronPreview && "problem" in cronPreview ? cronPreview.problem : null;

  const path = { id: pipeline.id };
  const changed = () => invalidate(keys.pipelines);
  const save = useMutation({
    mutationFn: () =>
      client.PUT("/data_pipelines/{id}/schedule", {
        params: { path },
        body: isInterval ? { every_minutes: minutesNumber, timezone: timeZone.trim() } : { cron: pattern.trim(), timezone: timeZone.trim() },
      }),
    onSuccess: changed,
  });
  const pause = useMutation({
    mutationFn: (paused: boolean) => client.PUT("/data_pipelines/{id}/schedule", { params: { path }, body: { paused } }),
    onSuccess: changed,
  });
  const remove = useMutation({
    mutationFn: () => client.DELETE("/data_pipelines/{id}/schedule", { params: { path } }),
    onSuccess: changed,
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (!problem) save.mutate();
  };

  return (
    <details className="schedule">
      <summary>
        Schedule: <span data-schedule-summary>{describeSchedule(schedule)}</span>
        {schedule && schedule.skipped_runs > 0 ? ` · ${schedule.skipped_runs} run(s) skipped while the previous one was still going` : ""}
      </summary>
      <form onSubmit={submit} aria-label={`Schedule of ${pipeline.name}`}>
        <div className="form-grid">
          <div className="field">
            <label htmlFor={`${idBase}-preset`}>Run</label>
            <select id={`${idBase}-preset`} value={preset} onChange={(e) => setPreset(e.target.value as PresetId)}>
              {PRESETS.map((p) => (
                <option key={p.id} value={p.id}>
                  {p.label}
                </option>
              ))}
            </select>
          </div>
          {preset === "custom" && (
            <div className="field">
              <label htmlFor={`${idBase}-cron`}>Cron pattern (minute hour day-of-month month day-of-week)</label>
              <input id={`${idBase}-cron`} value={cron} onChange={(e) => setCron(e.target.value)} aria-describedby={`${idBase}-preview`} spellCheck={false} />
            </div>
          )}
          {isInterval ? (
            <div className="field">
              <label htmlFor={`${idBase}-minutes`}>Minutes between runs (at least {MIN_EVERY_MINUTES})</label>
              <input id={`${idBase}-minutes`} type="number" min={MIN_EVERY_MINUTES} step={1} value={minutes} onChange={(e) => setMinutes(e.target.value)} aria-describedby={`${idBase}-preview`} />
            </div>
          ) : (
            <div className="field">
              <label htmlFor={`${idBase}-zone`}>Time zone (IANA name)</label>
              <input id={`${idBase}-zone`} value={timeZone} onChange={(e) => setTimeZone(e.target.value)} aria-describedby={`${idBase}-preview`} spellCheck={false} />
            </div>
          )}
        </div>
        <div id={`${idBase}-preview`} className="small" aria-live="polite">
          {problem ? (
            <p className="error">{problem}</p>
          ) : isInterval ? (
            <p className="muted">Runs every {minutesNumber} minutes, counted from when you save and then from each run's start.</p>
          ) : (
            cronPreview &&
            "runs" in cronPreview && (
              <>
                <p className="muted">Next runs:</p>
                <ol data-schedule-preview>
                  {cronPreview.runs.map((run) => (
                    <li key={run}>{run}</li>
                  ))}
                </ol>
              </>
            )
          )}
        </div>
        <div className="form-actions">
          <button type="submit" className="primary" disabled={save.isPending || problem !== null}>
            {save.isPending ? "Saving…" : schedule ? "Replace schedule" : "Save schedule"}
          </button>
          {schedule && (
            <button type="button" onClick={() => pause.mutate(!schedule.paused)} disabled={pause.isPending}>
              {schedule.paused ? "Resume schedule" : "Pause schedule"}
            </button>
          )}
          {schedule && (
            <button type="button" onClick={() => remove.mutate()} disabled={remove.isPending}>
              Remove schedule
            </button>
          )}
        </div>
        <ErrorText error={save.error ?? pause.error ?? remove.error} />
      </form>
    </details>
  );
}
