import { useMutation, useQuery } from "@tanstack/react-query";
import { useEffect, useRef, useState, type FormEvent } from "react";
import * as api from "../api";
import { client, invalidate, keys, queries, queryClient } from "../api";
import { ConfirmButton, Empty, ErrorText, Loading, ProgressBar, announce, usePageHeading } from "../components";
import { formatBytes, formatDuration, formatTime } from "../format";
import { href } from "../navigation";
import { ScheduleControl, describeSchedule } from "./ScheduleControl";

function CreatePipelineForm({ sources, collections }: { sources: api.DataSource[]; collections: api.Collection[] }) {
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [source, setSource] = useState("");
  const [collection, setCollection] = useState("");
  const create = useMutation({
    mutationFn: () => client.POST("/data_pipelines", { body: { name: name.trim(), description, data_source_id: source, collection_id: collection } }),
    onSuccess: () => {
      setName("");
      setDescription("");
      return invalidate(keys.pipelines);
    },
  });
  const ready = name.trim() && source && collection;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (ready) create.mutate();
  };
  return (
    <form className="card" onSubmit={submit} aria-label="Create pipeline">
      <h2>Create a pipeline</h2>
      {sources.length === 0 || collections.length === 0 ? (
        <Empty>
          A pipeline joins a <a href={href("sources")}>data source</a> to a <a href={href("collections")}>collection</a>; you need one of each.
        </Empty>
      ) : (
        <>
          <div className="form-grid">
            <div className="field">
              <label htmlFor="pipeline-name">Name</label>
              <input id="pipeline-name" value={name} onChange={(e) => setName(e.target.value)} required />
            </div>
            <div className="field">
              <label htmlFor="pipeline-description">Description (optional)</label>
              <input id="pipeline-description" value={description} onChange={(e) => setDescription(e.target.value)} />
            </div>
            <div className="field">
              <label htmlFor="pipeline-source">Data source</label>
              <select id="pipeline-source" value={source} onChange={(e) => setSource(e.target.value)} required>
                <option value="">Choose a source…</option>
                {sources.map((s) => (
                  <option key={s.id} value={s.id}>
                    {s.data_source_name}
                  </option>
                ))}
              </select>
            </div>
            <div className="field">
              <label htmlFor="pipeline-collection">Collection</label>
              <select id="pipeline-collection" value={collection} onChange={(e) => setCollection(e.target.value)} required>
                <option value="">Choose a collection…</option>
                {collections.map((c) => (
                  <option key={c.id} value={c.id}>
                    {c.name}
                  </option>
                ))}
              </select>
            </div>
          </div>
          <div className="form-actions">
            <button type="submit" className="primary" disabled={create.isPending || !ready}>
              {create.isPending ? "Creating…" : "Create pipeline"}
            </button>
          </div>
        </>
      )}
      <ErrorText error={create.error} />
    </form>
  );
}

/** Files that ended in the index (or stayed there unchanged): processed counts failed and skipped files too. */
function indexedCount(job: api.IngestJob): number {
  return job.entities_processed - job.entities_failed - job.entities_skipped;
}

function JobCounts({ job }: { job: api.IngestJob }) {
  return (
    <dl className="counts">
      <div>
        <dt>Found</dt>
        <dd data-count="discovered">{job.entities_discovered}</dd>
      </div>
      <div>
        <dt>Indexed</dt>
        <dd data-count="indexed">{indexedCount(job)}</dd>
      </div>
      <div>
        <dt>Failed</dt>
        <dd data-count="failed">{job.entities_failed}</dd>
      </div>
      <div>
        <dt>Skipped</dt>
        <dd data-count="skipped">{job.entities_skipped}</dd>
      </div>
      <div>
        <dt>Data</dt>
        <dd>{formatBytes(job.bytes_processed)}</dd>
      </div>
    </dl>
  );
}

function JobErrors({ job }: { job: api.IngestJob }) {
  if (!job.errors?.length) return null;
  return (
    <details className="job-errors">
      <summary>
        {job.errors.length} file error{job.errors.length === 1 ? "" : "s"}
      </summary>
      <ul>
        {job.errors.map((e, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: a job's error list never reorders and may name an entity twice
          <li key={i}>
            <code>{e.entity}</code>: {e.message}
          </li>
        ))}
      </ul>
    </details>
  );
}

const STAGE_LABELS: Array<[keyof NonNullable<api.IngestJob["timings"]>, string]> = [
  ["listing_s", "listing"],
  ["read_s", "reading"],
  ["parse_s", "parsing"],
  ["chunk_s", "chunking"],
  ["index_s", "indexing"],
  ["commit_s", "committing"],
];

/** One line on where a job's time went: busy seconds per stage (they overlap), then the file types that cost most to parse. */
function WhereTimeWent({ job }: { job: api.IngestJob }) {
  if (!job.timings) return null;
  const timings = job.timings;
  const stages = STAGE_LABELS.map(([key, label]) => `${label} ${timings[key].toFixed(1)} s`).join(" · ");
  const types = Object.entries(job.by_type ?? {})
    .sort(([, a], [, b]) => b.parse_s - a.parse_s || b.bytes - a.bytes)
    .slice(0, 4)
    .map(([type, t]) => `${type} ${t.files} file${t.files === 1 ? "" : "s"} (${formatBytes(t.bytes)}, parsing ${t.parse_s.toFixed(1)} s)`);
  return (
    <p className="muted small" data-timings>
      Where the time went: {stages} (stages overlap){types.length ? `; by type: ${types.join(", ")}` : ""}
    </p>
  );
}

/** The files left out, each with why; the list is bounded on the server, the count is not. */
function JobSkipped({ job }: { job: api.IngestJob }) {
  if (!job.skipped?.length) return null;
  const more = job.entities_skipped - job.skipped.length;
  return (
    <details className="job-skipped">
      <summary>
        {job.entities_skipped} skipped file{job.entities_skipped === 1 ? "" : "s"}
      </summary>
      <ul>
        {job.skipped.map((s) => (
          <li key={`${s.entity}\u0000${s.reason}`}>
            <code>{s.entity}</code>: {s.reason}
          </li>
        ))}
        {more > 0 && <li className="muted">and {more} more</li>}
      </ul>
    </details>
  );
}

/** A failed run's error in words; the raw text one click away when it says more. */
function JobFailure({ job }: { job: api.IngestJob }) {
  if (!job.error_message) return null;
  const words = job.error_summary ?? job.error_message;
  return (
    <div className="job-failure">
      <p className="error" data-job-error>
        {words}
      </p>
      {words !== job.error_message && (
        <details className="small">
          <summary>Technical details</summary>
          <code data-job-error-raw>{job.error_message}</code>
        </details>
      )}
    </div>
  );
}

/** What changed in a finished run; an unchanged re-run says so first. */
function changeSummary(job: api.IngestJob): string {
  // Only a source with the file server's permissions can have permission changes: others are not told of them.
  const permissions = job.files_permissions_changed > 0 ? `, ${job.files_permissions_changed} with new permissions` : "";
  const counts = `${job.files_unchanged} unchanged, ${job.files_added} added, ${job.files_changed} changed, ${job.files_removed} removed${permissions}`;
  const none = job.files_added + job.files_changed + job.files_removed + job.files_permissions_changed === 0;
  return none ? `No changes: ${counts}` : counts;
}

/** Files per second since the run started, and the time left at that pace (null until it can tell). */
function pace(job: api.IngestJob, now: number): { perSecond: number; secondsLeft: number | null } | null {
  const seconds = (now - new Date(`${job.started_at}Z`).getTime()) / 1000;
  if (seconds < 1 || job.entities_processed === 0) return null;
  const perSecond = job.entities_processed / seconds;
  const left = job.entities_discovered - job.entities_processed;
  return { perSecond, secondsLeft: left > 0 ? left / perSecond : null };
}

function progressText(job: api.IngestJob): string {
  if (job.status !== "processing") return job.status === "completed" ? "100%" : "";
  if (job.queued) return "waiting for other runs";
  if (job.progress_percentage === null) return "looking for files…";
  const parts = [`${job.progress_percentage.toFixed(1)}%`, `${job.entities_processed} of ${job.entities_discovered} files found so far`];
  const p = pace(job, Date.now());
  if (p) {
    parts.push(`${p.perSecond >= 10 ? Math.round(p.perSecond) : p.perSecond.toFixed(1)} files/s`);
    if (p.secondsLeft !== null) parts.push(`about ${formatDuration(p.secondsLeft)} left`);
  }
  return parts.join(" · ");
}

/**
 * What the run's badge says. The API keeps `completed` for a run with failed files (spec); the
 * user is told it had errors, and a cancelled run says so rather than just `failed`.
 */
function statusLabel(job: api.IngestJob): string {
  if (job.status === "processing") return job.queued ? "queued" : job.cancel_requested_by ? "cancelling" : "processing";
  if (job.status === "completed" && (job.entities_failed > 0 || job.errors.length > 0)) return "completed with errors";
  if (job.status === "failed" && job.error_message?.startsWith("Cancelled by ")) return "cancelled";
  return job.status;
}

function outcomeClass(job: api.IngestJob): string {
  const label = statusLabel(job);
  return label === "completed with errors" ? "status-warning" : `status-${job.status}`;
}

function JobHistory({ pipelineId }: { pipelineId: string }) {
  const jobs = useQuery(queries.jobs(pipelineId));
  return (
    <details className="history">
      <summary>Job history{jobs.data ? ` (${jobs.data.length})` : ""}</summary>
      {jobs.isPending ? <Loading /> : null}
      <ErrorText error={jobs.error} />
      {jobs.data && jobs.data.length === 0 && <Empty>This pipeline has never run.</Empty>}
      {jobs.data && jobs.data.length > 0 && (
        <ul className="plain">
          {jobs.data.map((job) => (
            <li key={job.job_id} className="history-item">
              <div className="row-between">
                <span>
                  <span className={`badge ${outcomeClass(job)}`} data-job-outcome={statusLabel(job)}>{statusLabel(job)}</span> started {formatTime(job.started_at)}
                  {job.completed_at ? `, ended ${formatTime(job.completed_at)}` : ""}
                </span>
                <span className="muted small" data-job-changes>
                  {job.trigger === "schedule" ? "scheduled" : "by hand"} · {job.files_added} added · {job.files_changed} changed · {job.files_removed} removed ·{" "}
                  {job.files_unchanged} unchanged{job.files_permissions_changed > 0 ? ` (${job.files_permissions_changed} with new permissions)` : ""} · {job.entities_failed} failed ·{" "}
                  {job.entities_skipped} skipped
                </span>
              </div>
              <JobFailure job={job} />
              <WhereTimeWent job={job} />
              <JobErrors job={job} />
              <JobSkipped job={job} />
            </li>
          ))}
        </ul>
      )}
    </details>
  );
}

function PipelineCard({
  pipeline,
  sourceName,
  collectionName,
  focused,
}: {
  pipeline: api.Pipeline;
  sourceName: string;
  collectionName: string;
  focused: boolean;
}) {
  // The job's state lives on the server: read on mount (so a reload shows a running job) and every second while it runs.
  const status = useQuery(queries.ingestStatus(pipeline.id));
  const job = status.data;
  const ref = useRef<HTMLLIElement>(null);
  const processing = job?.status === "processing";

  // A job starting or finishing changes the pipeline's status, its history and the collection's counts.
  const [wasProcessing, setWasProcessing] = useState<boolean | null>(null);
  useEffect(() => {
    if (job === undefined || wasProcessing === processing) return;
    setWasProcessing(processing);
    if (wasProcessing === null) return;
    // Announced once, when a run ends: the live view itself is not a live region (it would read every file name).
    if (wasProcessing && job) announce(`${pipeline.name}: ${statusLabel(job)}.`);
    void invalidate(keys.pipelines, keys.collections);
  }, [job, processing, wasProcessing, pipeline.name]);

  useEffect(() => {
    if (focused) ref.current?.scrollIntoView({ block: "center" });
  }, [focused]);

  const path = { id: pipeline.id };
  const showJob = (next: api.IngestJob) => queryClient.setQueryData(queries.ingestStatus(pipeline.id).queryKey, next);
  const trigger = useMutation({
    mutationFn: () => api.answer(client.POST("/data_pipelines/{id}/ingest", { params: { path } })),
    onSuccess: (started) => {
      showJob(started);
      announce(`${pipeline.name} started.`);
      return invalidate(queries.jobs(pipeline.id).queryKey);
    },
  });
  const cancel = useMutation({
    mutationFn: () => api.answer(client.POST("/data_pipelines/{id}/ingest/cancel", { params: { path } })),
    onSuccess: showJob,
  });

  return (
    <li ref={ref} className={`card pipeline${focused ? " focused" : ""}`} aria-label={`pipeline ${pipeline.name}`}>
      <div className="row-between">
        <div>
          <h3>
            {pipeline.name} <span className={`badge status-${pipeline.status}`}>{pipeline.status}</span>
          </h3>
          <p className="muted small">
            {sourceName} → <a href={href("collections", pipeline.collection_id)}>{collectionName}</a>
            {pipeline.description ? ` · ${pipeline.description}` : ""}
          </p>
          <p className="muted small" data-pipeline-schedule>
            {describeSchedule(pipeline.schedule)}
          </p>
        </div>
        <div className="row-actions">
          <button type="button" className="primary" onClick={() => trigger.mutate()} disabled={trigger.isPending || processing}>
            {processing ? "Running…" : trigger.isPending ? "Starting…" : "Run now"}
          </button>
          {processing && (
            <ConfirmButton
              label="Cancel run"
              confirmLabel="Yes, cancel the run"
              question={`Cancel the run of ${pipeline.name}? Files indexed so far stay searchable.`}
              onConfirm={() => cancel.mutate()}
              busy={cancel.isPending || Boolean(job?.cancel_requested_by)}
            />
          )}
        </div>
      </div>
      <ErrorText error={trigger.error} />
      <ErrorText error={cancel.error} />
      <ErrorText error={status.error} />
      {job === undefined && <Loading label="Checking status…" />}
      {job === null && <p className="muted">Never run.</p>}
      {job && (
        <div className="job">
          <div className="row-between small">
            <span>
              Last run:{" "}
              <span className={`badge ${outcomeClass(job)}`} data-job-status={job.status} data-job-outcome={statusLabel(job)}>
                {statusLabel(job)}
              </span>
            </span>
            <span className="muted" data-progress>
              {progressText(job)}
            </span>
          </div>
          {/* A finished run has no moving bar: a failed one shows its error instead. */}
          {job.status !== "failed" && <ProgressBar value={job.progress_percentage} label={`Progress of ${pipeline.name}`} />}
          {processing && job.current_entity && (
            <p className="current small" title={job.current_entity}>
              {job.current_entity}
            </p>
          )}
          <JobCounts job={job} />
          {job.status === "completed" && (
            <p className="small" data-job-summary>
              {changeSummary(job)}
            </p>
          )}
          <JobFailure job={job} />
          <JobErrors job={job} />
          <JobSkipped job={job} />
        </div>
      )}
      <ScheduleControl pipeline={pipeline} />
      <JobHistory pipelineId={pipeline.id} />
    </li>
  );
}

export function PipelinesPage({ focusId }: { focusId?: string }) {
  const heading = usePageHeading("Pipelines");
  const pipelines = useQuery(queries.pipelines());
  const sources = useQuery(queries.sources());
  const collections = useQuery(queries.collections());
  const sourceName = (id: string) => sources.data?.find((s) => s.id === id)?.data_source_name ?? "…";
  const collectionName = (id: string) => collections.data?.find((c) => c.id === id)?.name ?? "…";
  return (
    <div className="page">
      <h1 ref={heading} tabIndex={-1}>
        Pipelines
      </h1>
      <section aria-labelledby="pipelines-heading">
        <h2 id="pipelines-heading" className="sr-only">
          Your pipelines
        </h2>
        {pipelines.isPending ? <Loading /> : null}
        <ErrorText error={pipelines.error} />
        {pipelines.data && pipelines.data.length === 0 && <Empty>No pipelines yet. Adding a data source creates one.</Empty>}
        <ul className="plain">
          {(pipelines.data ?? []).map((p) => (
            <PipelineCard
              key={p.id}
              pipeline={p}
              sourceName={sourceName(p.data_source_id)}
              collectionName={collectionName(p.collection_id)}
              focused={p.id === focusId}
            />
          ))}
        </ul>
      </section>
      {sources.data && collections.data && (
        <CreatePipelineForm sources={sources.data} collections={collections.data} />
      )}
    </div>
  );
}
