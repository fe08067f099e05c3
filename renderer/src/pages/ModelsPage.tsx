import { useMutation, useQuery } from "@tanstack/react-query";
import { useEffect, useRef, useState, type FormEvent } from "react";
import * as api from "../api";
import { client, invalidate, keys, queries } from "../api";
import { ConfirmButton, Empty, ErrorText, Loading, ProgressBar, usePageHeading } from "../components";
import { formatBytes, formatDuration, formatTime } from "../format";
import { applyPullEvent, isRunning, speedOf, startingPull, type PullState } from "./model-pull";
import { useInstanceActions } from "./instance-actions";
import { ModelServerBanner, serverDownMessage, useModelServer, useViewer } from "./ModelServerBanner";
import "./models.css";

const DEBOUNCE_MS = 250;

/** The tags a library entry offers to pull ("name:size", or the bare name). */
const tagsOf = (m: api.LibraryModel) => (m.sizes.length ? m.sizes.map((s) => `${m.name}:${s}`) : [m.name]);
/** Ollama's spelling: no tag means ":latest". */
const sameModel = (a: string, b: string) => {
  const canonical = (n: string) => (n.slice(n.lastIndexOf("/") + 1).includes(":") ? n : `${n}:latest`).toLowerCase();
  return canonical(a) === canonical(b);
};
const pullButtonId = (tag: string) => `pull-${tag.replace(/[^A-Za-z0-9_-]/g, "_")}`;

interface PullControls {
  /** Pull buttons are shown: false for a member of a server where an administrator pulls. */
  mayPull: boolean;
  pull: PullState | null;
  onPull: (name: string, update?: boolean) => void;
  onCancel: () => void;
  cancelling: boolean;
  cancelError: unknown;
}

function LibrarySearch({ controls }: { controls: PullControls }) {
  const { pull, onPull } = controls;
  const pulling = isRunning(pull);
  const [query, setQuery] = useState("");
  // Asked once typing pauses; each query's answer is cached, and a superseded request is aborted.
  const [asked, setAsked] = useState("");
  useEffect(() => {
    const timer = setTimeout(() => setAsked(query.trim()), DEBOUNCE_MS);
    return () => clearTimeout(timer);
  }, [query]);
  const library = useQuery(queries.library(asked));
  const typed = query.trim() !== "" && asked !== "";
  const results = typed ? (library.data ?? null) : null;
  const error = typed ? library.error : null;
  const loading = typed && library.isFetching;

  return (
    <section className="card" aria-labelledby="library-heading">
      <h2 id="library-heading">Model library</h2>
      <div className="field">
        <label htmlFor="library-q">Search the public library</label>
        <input id="library-q" type="search" value={query} onChange={(e) => setQuery(e.target.value)} placeholder="e.g. llama, mistral, embed…" />
      </div>
      {loading && <Loading label="Searching…" />}
      <ErrorText error={error} />
      {results && results.length === 0 && !loading && <Empty>No models match “{query}”.</Empty>}
      {/* A pull whose entry is not among the results (the search changed) stays in view here. */}
      {pull && !results?.some((m) => tagsOf(m).some((t) => sameModel(t, pull.model))) && <PullPanel controls={controls} pull={pull} />}
      {results && results.length > 0 && (
        <ul className="plain library">
          {results.map((m) => {
            const tags = tagsOf(m);
            const here = pull && tags.some((t) => sameModel(t, pull.model)) ? pull : null;
            return (
              <li key={m.name} className="library-item">
                <div className="row-between">
                  <strong>{m.name}</strong>
                  <span className="muted small">
                    {m.pulls.toLocaleString()} pulls{m.updated_at ? ` · updated ${m.updated_at.slice(0, 10)}` : ""}
                  </span>
                </div>
                <p className="small">{m.description}</p>
                <div className="tags">
                  {m.capabilities.map((c) => (
                    <span key={c} className="badge">
                      {c}
                    </span>
                  ))}
                </div>
                <div className="tags">
                  {controls.mayPull
                    ? tags.map((tag) => (
                        <button key={tag} id={pullButtonId(tag)} type="button" className="small-button" disabled={pulling} onClick={() => onPull(tag)}>
                          Pull {tag}
                        </button>
                      ))
                    : tags.map((tag) => (
                        <span key={tag} className="badge">
                          {tag}
                        </span>
                      ))}
                </div>
                {here && <PullPanel controls={controls} pull={here} />}
              </li>
            );
          })}
        </ul>
      )}
    </section>
  );
}

/** One pull, next to the button that started it: the whole download first, the layers folded under it. */
function PullPanel({ controls, pull }: { controls: PullControls; pull: PullState }) {
  const running = isRunning(pull);
  const cancelRef = useRef<HTMLButtonElement>(null);
  // Starting a pull disables the Pull buttons: focus goes to what can be done next, cancelling it.
  useEffect(() => {
    if (running) cancelRef.current?.focus();
  }, [running]);
  const layers = Object.entries(pull.layers);
  const percent = pull.totalBytes > 0 ? (pull.completedBytes / pull.totalBytes) * 100 : null;
  const speed = speedOf(pull);
  const eta = speed && speed > 0 && pull.totalBytes > pull.completedBytes ? (pull.totalBytes - pull.completedBytes) / speed : null;
  const figures = [
    percent !== null ? `${Math.floor(percent)}%` : null,
    pull.totalBytes > 0 ? `${formatBytes(pull.completedBytes)} of ${formatBytes(pull.totalBytes)}` : null,
    speed !== null ? `${formatBytes(speed)}/s` : null,
    eta !== null ? `about ${formatDuration(eta)} left` : null,
  ].filter(Boolean);
  return (
    // biome-ignore lint/a11y/useSemanticElements: a labelled group of progress and controls, not form fields for a <fieldset>
    <div className={`pull-panel${running ? " running" : ""}`} role="group" aria-label={`Pull of ${pull.model}`}>
      {running && (
        <>
          <div className="row-between pull-head">
            <span className="small">
              {pull.phase === "starting" && `Starting the download of ${pull.model}…`}
              {pull.phase === "downloading" && `Downloading ${pull.model}`}
              {pull.phase === "benchmarking" && `Downloaded ${pull.model}; measuring its speed…`}
            </span>
            <button
              ref={cancelRef}
              type="button"
              className="small-button"
              onClick={controls.onCancel}
              disabled={controls.cancelling}
              aria-label={`Cancel pull of ${pull.model}`}
            >
              {controls.cancelling ? "Cancelling…" : "Cancel pull"}
            </button>
          </div>
          <ProgressBar value={pull.phase === "benchmarking" ? 100 : percent} label={`Download of ${pull.model}`} />
          {pull.phase === "downloading" && figures.length > 0 && <p className="small pull-figures">{figures.join(" · ")}</p>}
          {pull.retrying && <p className="small muted">{pull.retrying}</p>}
          {layers.length > 0 && (
            <details className="layers">
              <summary className="small">
                {layers.length} {layers.length === 1 ? "layer" : "layers"}
              </summary>
              {layers.map(([layer, p]) => {
                const short = layer.replace(/^sha256:/, "").slice(0, 12);
                return (
                  <div key={layer} className="layer">
                    <div className="row-between small">
                      <code>{short}</code>
                      <span className="muted">
                        {formatBytes(p.completed)} / {formatBytes(p.total)}
                      </span>
                    </div>
                    <ProgressBar value={p.total ? (p.completed / p.total) * 100 : null} label={`Layer ${short}`} />
                  </div>
                );
              })}
            </details>
          )}
          <ErrorText error={controls.cancelError} />
        </>
      )}
      {/* Each outcome is said once, when it happens (role status/alert), not on every progress tick. */}
      {pull.phase === "completed" && pull.record && (
        <p className="notice" role="status">
          {pull.record.model_name} is in the catalog{pull.record.tokens_per_second ? ` (${pull.record.tokens_per_second.toFixed(1)} tokens/s)` : ""}.
        </p>
      )}
      {pull.phase === "present" && pull.record && (
        <div className="notice row-between" role="status">
          <span>{pull.record.model_name} is already in the catalog, so nothing was downloaded.</span>
          <button type="button" className="small-button" onClick={() => controls.onPull(pull.model, true)}>
            Check for a newer version
          </button>
        </div>
      )}
      {pull.phase === "cancelled" && pull.cancelMessage && (
        <p className="notice" role="status">
          {pull.cancelMessage}
        </p>
      )}
      {pull.phase === "failed" && pull.error && (
        <p className="error" role="alert">
          {pull.error}
        </p>
      )}
    </div>
  );
}

function Catalog({
  models,
  onAddMine,
  server,
  mayDelete,
}: {
  models: api.CatalogModel[];
  onAddMine: (name: string) => void;
  server: api.ModelServerStatus | null;
  /** Delete buttons are shown: false for a member of a server where an administrator removes models. */
  mayDelete: boolean;
}) {
  const del = useMutation({
    mutationFn: (id: string) => client.DELETE("/models/{id}", { params: { path: { id } } }),
    onSuccess: () => invalidate(keys.models, keys.myModels),
  });
  // A model server that is down answers 503: said in the viewer's words, like the page's banner.
  const viewer = useViewer();
  const deleteError = del.error instanceof api.ApiError && del.error.status === 503 ? `${serverDownMessage(server, viewer)} Nothing was deleted.` : del.error;
  if (models.length === 0) return <Empty>{mayDelete ? "No models pulled yet. Search the library and pull one." : "No models pulled yet."}</Empty>;
  return (
    <>
      <div className="table-wrap">
        <table className="stacked">
          <thead>
            <tr>
              <th scope="col">Model</th>
              <th scope="col">Family</th>
              <th scope="col">Size</th>
              <th scope="col" className="num">
                Tokens/s
              </th>
              <th scope="col" className="num">
                Tokens processed
              </th>
              <th scope="col">Pulled</th>
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {models.map((m) => (
              <tr key={m.id}>
                <th scope="row" id={`catalog-${m.id}`}>
                  {m.model_name}
                </th>
                <td data-label="Family">
                  <span>
                    {m.family ?? "—"}
                    {m.parameter_size || m.quantization ? <span className="muted small nowrap block">{[m.parameter_size, m.quantization].filter(Boolean).join(" · ")}</span> : null}
                  </span>
                </td>
                <td className="nowrap" data-label="Size">
                  {formatBytes(m.size_bytes)}
                </td>
                <td className="num" data-label="Tokens/s">
                  {m.tokens_per_second != null ? m.tokens_per_second.toFixed(1) : "—"}
                </td>
                <td className="num" data-label="Tokens processed">
                  {m.total_tokens_processed.toLocaleString()}
                </td>
                <td data-label="Pulled">{formatTime(m.pulled_at)}</td>
                <td className="actions-cell">
                  {/* Picks the model in the "My models" form below; that form's own button saves it. */}
                  <button type="button" onClick={() => onAddMine(m.model_name)} aria-describedby={`catalog-${m.id}`}>
                    Add to my models
                  </button>
                  {mayDelete && <ConfirmButton label="Delete" question={`Delete ${m.model_name} for everyone?`} onConfirm={() => del.mutate(m.id)} busy={del.isPending} />}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <ErrorText error={deleteError} />
    </>
  );
}

function MyModelRow({ record }: { record: api.PersonalModel }) {
  const [editing, setEditing] = useState(false);
  const [notes, setNotes] = useState(record.hardware_notes);
  const save = useMutation({
    mutationFn: (value: string) => client.PUT("/models/my", { body: { model_name: record.model_name, hardware_notes: value } }),
    onSuccess: () => {
      setEditing(false);
      return invalidate(keys.myModels);
    },
  });
  const remove = useMutation({
    mutationFn: () => client.DELETE("/models/my/{record_id}", { params: { path: { record_id: record.id } } }),
    onSuccess: () => invalidate(keys.myModels),
  });
  return (
    <li className="my-model">
      <div className="row-between">
        <strong>{record.model_name}</strong>
        <span className="actions">
          {!editing && (
            <button
              type="button"
              onClick={() => {
                setNotes(record.hardware_notes);
                setEditing(true);
              }}
            >
              {record.hardware_notes ? "Edit notes" : "Add notes"}
            </button>
          )}
          {!editing && record.hardware_notes && (
            <button type="button" onClick={() => save.mutate("")}>
              Clear notes
            </button>
          )}
          <ConfirmButton label="Remove" confirmLabel="Yes, remove" question={`Remove ${record.model_name} from your list?`} onConfirm={() => remove.mutate()} busy={remove.isPending} />
        </span>
      </div>
      {editing ? (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            save.mutate(notes);
          }}
        >
          <label htmlFor={`notes-${record.id}`}>Hardware notes</label>
          <textarea id={`notes-${record.id}`} value={notes} onChange={(e) => setNotes(e.target.value)} rows={3} />
          <div className="form-actions">
            <button type="submit" className="primary" disabled={save.isPending}>
              Save
            </button>
            <button type="button" onClick={() => setEditing(false)}>
              Cancel
            </button>
          </div>
        </form>
      ) : (
        <p className={record.hardware_notes ? "small" : "muted small"}>{record.hardware_notes || "No hardware notes."}</p>
      )}
      <ErrorText error={save.error} />
      <ErrorText error={remove.error} />
    </li>
  );
}

function MyModels({
  catalog,
  mine,
  preset,
}: {
  catalog: api.CatalogModel[];
  mine: api.PersonalModel[];
  preset: { name: string; n: number } | null;
}) {
  const [model, setModel] = useState(preset?.name ?? "");
  const [notes, setNotes] = useState("");
  const notesRef = useRef<HTMLInputElement>(null);
  // "Add to my models" in the catalog picks the model here and moves focus to its notes, once
  // the picked model shows in the form (focusing at once could land before the form showed it).
  const focusNotes = useRef(false);
  useEffect(() => {
    if (!preset) return;
    setModel(preset.name);
    focusNotes.current = true;
  }, [preset]);
  useEffect(() => {
    if (!focusNotes.current || model !== preset?.name) return;
    focusNotes.current = false;
    notesRef.current?.focus();
  }, [model, preset]);
  const add = useMutation({
    mutationFn: () => client.POST("/models/my", { body: { model_name: model, hardware_notes: notes } }),
    onSuccess: () => {
      setNotes("");
      return invalidate(keys.myModels);
    },
  });
  const available = catalog.filter((c) => !mine.some((m) => m.model_name === c.model_name));
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (model) add.mutate();
  };
  return (
    <>
      {mine.length === 0 ? (
        <Empty>Your personal list is empty.</Empty>
      ) : (
        <ul className="plain">
          {mine.map((r) => (
            <MyModelRow key={r.id} record={r} />
          ))}
        </ul>
      )}
      <form className="form-grid" onSubmit={submit} aria-label="Add to my models">
        <div className="field">
          <label htmlFor="my-model">Model from the catalog</label>
          <select id="my-model" value={model} onChange={(e) => setModel(e.target.value)}>
            <option value="">Choose…</option>
            {available.map((m) => (
              <option key={m.id} value={m.model_name}>
                {m.model_name}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor="my-notes">Hardware notes</label>
          <input id="my-notes" ref={notesRef} value={notes} onChange={(e) => setNotes(e.target.value)} placeholder="e.g. runs well on M2, 16 GB" />
        </div>
        <div className="form-actions">
          <button type="submit" className="primary" disabled={add.isPending || !model}>
            Save to my models
          </button>
        </div>
      </form>
      <ErrorText error={add.error} />
    </>
  );
}

export function ModelsPage() {
  const heading = usePageHeading("Models");
  const catalog = useQuery(queries.models());
  const mine = useQuery(queries.myModels());
  const modelServer = useModelServer();
  const [pull, setPull] = useState<PullState | null>(null);
  const [preset, setPreset] = useState<{ name: string; n: number } | null>(null);
  const cancel = useMutation({
    mutationFn: (model: string) => client.POST("/models/cancel", { body: { model_name: model } }),
  });

  const startPull = async (model: string, update = false) => {
    setPull(startingPull(model));
    cancel.reset();
    const change = (next: (s: PullState) => PullState) => setPull((s) => (s && s.model === model ? next(s) : s));
    try {
      await api.pullModel(model, (event) => change((s) => applyPullEvent(s, event, Date.now())), update);
      // A stream that ends with no last word: the connection dropped (the server restarted, say).
      change((s) => (isRunning(s) ? { ...s, phase: "failed", error: "The connection to the server was lost before the pull finished. Pull again to pick up where it stopped." } : s));
    } catch (e) {
      change((s) => ({ ...s, phase: "failed", error: api.errorMessage(e) }));
    }
    // The stream is the pull's progress; the catalog it ends in is read again.
    void invalidate(keys.models);
  };

  // When a pull ends its Cancel button goes: focus goes back to the Pull button (enabled again by
  // then, hence after the render), unless the user has moved on.
  const wasRunning = useRef(false);
  useEffect(() => {
    const running = isRunning(pull);
    if (wasRunning.current && !running && pull) {
      const active = document.activeElement;
      if (!active || active === document.body || active.closest(".pull-panel")) document.getElementById(pullButtonId(pull.model))?.focus();
    }
    wasRunning.current = running;
  }, [pull]);

  // A pull that failed because the model server went away: the banner says it (once), after a fresh check.
  const serverDown = pull?.serverDown ?? false;
  useEffect(() => {
    if (serverDown) void invalidate(keys.modelServer);
  }, [serverDown]);

  const status = modelServer.server.state === "known" ? modelServer.server.status : null;
  // A LAN server keeps the catalog to its administrators: their buttons are not shown to others, and one line says who can (issue 34 items 1, 10).
  const actions = useInstanceActions();
  const controls: PullControls = {
    mayPull: actions === "allowed",
    pull,
    onPull: (name, update) => void startPull(name, update),
    onCancel: () => pull && cancel.mutate(pull.model),
    cancelling: cancel.isPending,
    cancelError: cancel.error,
  };
  return (
    <div className="page models-page">
      <h1 ref={heading} tabIndex={-1}>
        Models
      </h1>
      <ModelServerBanner server={modelServer.server} onCheck={modelServer.check} />
      {actions === "administrators" && (
        <p className="muted" data-admin-note="models">
          On this server an administrator pulls and removes models; you can add catalog models to your own list.
        </p>
      )}
      <section className="card" aria-labelledby="catalog-heading">
        <h2 id="catalog-heading">Catalog</h2>
        {catalog.isPending ? <Loading /> : null}
        <ErrorText error={catalog.error} />
        {catalog.data && (
          <Catalog
            models={catalog.data}
            server={status}
            mayDelete={actions === "allowed"}
            onAddMine={(name) => setPreset((p) => ({ name, n: (p?.n ?? 0) + 1 }))}
          />
        )}
      </section>
      <div className="two-col">
        <LibrarySearch controls={controls} />
        <section className="card" aria-labelledby="mine-heading">
          <h2 id="mine-heading">My models</h2>
          {mine.isPending ? <Loading /> : null}
          <ErrorText error={mine.error} />
          {mine.data && <MyModels catalog={catalog.data ?? []} mine={mine.data} preset={preset} />}
        </section>
      </div>
    </div>
  );
}
