import { useEffect, useRef, useState, type FormEvent } from "react";
import * as api from "../api";
import { ConfirmButton, Empty, ErrorText, Loading, ProgressBar, formatBytes, formatTime, useAction, useLoad, usePageHeading } from "../components";

const DEBOUNCE_MS = 250;

interface PullState {
  model: string;
  layers: Record<string, { completed: number; total: number }>;
  message: string | null;
  error: string | null;
  done: api.CatalogModel | null;
  running: boolean;
}

function LibrarySearch({ onPull, pulling }: { onPull: (name: string) => void; pulling: boolean }) {
  const [query, setQuery] = useState("");
  const [results, setResults] = useState<api.LibraryModel[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(false);

  useEffect(() => {
    const q = query.trim();
    if (!q) {
      setResults(null);
      setError(null);
      return;
    }
    const controller = new AbortController();
    const timer = setTimeout(async () => {
      setLoading(true);
      try {
        setResults(await api.searchLibrary(q, 10, controller.signal));
        setError(null);
      } catch (e) {
        if ((e as Error).name !== "AbortError") setError(e);
      } finally {
        if (!controller.signal.aborted) setLoading(false);
      }
    }, DEBOUNCE_MS);
    return () => {
      clearTimeout(timer);
      controller.abort();
    };
  }, [query]);

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
      {results && results.length > 0 && (
        <ul className="plain library">
          {results.map((m) => (
            <li key={m.name} className="library-item">
              <div className="row-between">
                <strong>{m.name}</strong>
                <span className="muted small">{m.pulls.toLocaleString()} pulls{m.updated_at ? ` · updated ${m.updated_at.slice(0, 10)}` : ""}</span>
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
                {(m.sizes.length ? m.sizes.map((s) => `${m.name}:${s}`) : [m.name]).map((tag) => (
                  <button key={tag} type="button" className="small-button" disabled={pulling} onClick={() => onPull(tag)}>
                    Pull {tag}
                  </button>
                ))}
              </div>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function PullProgress({ pull }: { pull: PullState }) {
  const layers = Object.entries(pull.layers);
  return (
    <section className="card" aria-labelledby="pull-heading" aria-live="polite">
      <h2 id="pull-heading">Pulling {pull.model}</h2>
      {layers.map(([layer, p]) => (
        <div key={layer} className="layer">
          <div className="row-between small">
            <code>{layer.slice(0, 19)}</code>
            <span className="muted">
              {formatBytes(p.completed)} / {formatBytes(p.total)}
            </span>
          </div>
          <ProgressBar value={p.total ? (p.completed / p.total) * 100 : null} label={`Layer ${layer}`} />
        </div>
      ))}
      {pull.running && layers.length === 0 && !pull.message && <Loading label="Starting download…" />}
      {pull.message && <p className="muted">{pull.message}</p>}
      {pull.error && <p className="error" role="alert">{pull.error}</p>}
      {pull.done && (
        <p className="notice" role="status">
          {pull.done.model_name} is in the catalog{pull.done.tokens_per_second ? ` (${pull.done.tokens_per_second.toFixed(1)} tokens/s)` : ""}.
        </p>
      )}
    </section>
  );
}

function Catalog({ models, onChanged, onAddMine }: { models: api.CatalogModel[]; onChanged: () => void; onAddMine: (name: string) => void }) {
  const del = useAction(async (id: string) => {
    await api.deleteModel(id);
    onChanged();
  });
  if (models.length === 0) return <Empty>No models pulled yet. Search the library and pull one.</Empty>;
  return (
    <>
      <div className="table-wrap">
        <table className="stack-table">
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
                <th scope="row">{m.model_name}</th>
                <td data-label="Family">
                  {m.family ?? "—"}
                  {m.parameter_size || m.quantization ? <div className="muted small nowrap">{[m.parameter_size, m.quantization].filter(Boolean).join(" · ")}</div> : null}
                </td>
                <td className="nowrap" data-label="Size">{formatBytes(m.size_bytes)}</td>
                <td className="num" data-label="Tokens/s">{m.tokens_per_second != null ? m.tokens_per_second.toFixed(1) : "—"}</td>
                <td className="num" data-label="Tokens processed">{m.total_tokens_processed.toLocaleString()}</td>
                <td data-label="Pulled">{formatTime(m.pulled_at)}</td>
                <td className="actions-cell">
                  <button type="button" onClick={() => onAddMine(m.model_name)}>
                    Add to my models
                  </button>
                  <ConfirmButton label="Delete" question={`Delete ${m.model_name} for everyone?`} onConfirm={() => void del.run(m.id)} busy={del.busy} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <ErrorText error={del.error} />
    </>
  );
}

function MyModelRow({ record, onChanged }: { record: api.PersonalModel; onChanged: () => void }) {
  const [editing, setEditing] = useState(false);
  const [notes, setNotes] = useState(record.hardware_notes);
  const save = useAction(async (value: string) => {
    await api.updateMyModel(record.model_name, value);
    setEditing(false);
    onChanged();
  });
  const remove = useAction(async () => {
    await api.deleteMyModel(record.id);
    onChanged();
  });
  return (
    <li className="my-model">
      <div className="row-between">
        <strong>{record.model_name}</strong>
        <span className="actions">
          {!editing && (
            <button type="button" onClick={() => (setNotes(record.hardware_notes), setEditing(true))}>
              {record.hardware_notes ? "Edit notes" : "Add notes"}
            </button>
          )}
          {!editing && record.hardware_notes && (
            <button type="button" onClick={() => void save.run("")}>
              Clear notes
            </button>
          )}
          <ConfirmButton label="Remove" confirmLabel="Yes, remove" question={`Remove ${record.model_name} from your list?`} onConfirm={() => void remove.run()} busy={remove.busy} />
        </span>
      </div>
      {editing ? (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void save.run(notes);
          }}
        >
          <label htmlFor={`notes-${record.id}`}>Hardware notes</label>
          <textarea id={`notes-${record.id}`} value={notes} onChange={(e) => setNotes(e.target.value)} rows={3} />
          <div className="form-actions">
            <button type="submit" className="primary" disabled={save.busy}>
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
  onChanged,
  preset,
}: {
  catalog: api.CatalogModel[];
  mine: api.PersonalModel[];
  onChanged: () => void;
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
  const add = useAction(async () => {
    await api.addMyModel(model, notes);
    setNotes("");
    onChanged();
  });
  const available = catalog.filter((c) => !mine.some((m) => m.model_name === c.model_name));
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (model) void add.run();
  };
  return (
    <>
      {mine.length === 0 ? (
        <Empty>Your personal list is empty.</Empty>
      ) : (
        <ul className="plain">
          {mine.map((r) => (
            <MyModelRow key={r.id} record={r} onChanged={onChanged} />
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
          <button type="submit" className="primary" disabled={add.busy || !model}>
            Add to my models
          </button>
        </div>
      </form>
      <ErrorText error={add.error} />
    </>
  );
}

export function ModelsPage() {
  const heading = usePageHeading("Models");
  const catalog = useLoad(api.listModels);
  const mine = useLoad(api.listMyModels);
  const [pull, setPull] = useState<PullState | null>(null);
  const [preset, setPreset] = useState<{ name: string; n: number } | null>(null);

  const startPull = async (model: string) => {
    const state: PullState = { model, layers: {}, message: null, error: null, done: null, running: true };
    setPull(state);
    const update = (patch: (s: PullState) => PullState) => setPull((s) => (s && s.model === model ? patch(s) : s));
    try {
      const done = await api.pullModel(model, (event) => {
        if (event.status.startsWith("pulling ")) {
          const layer = event.status.slice("pulling ".length);
          if (typeof event.total === "number")
            update((s) => ({ ...s, layers: { ...s.layers, [layer]: { completed: event.completed ?? 0, total: event.total ?? 0 } } }));
          else update((s) => ({ ...s, message: event.status }));
        } else if (event.status === "benchmarking") update((s) => ({ ...s, message: event.message ?? "Benchmarking…" }));
        else if (event.status === "retrying")
          update((s) => ({
            ...s,
            message: `Retrying${event.attempt ? ` (attempt ${event.attempt}${event.max_attempts ? ` of ${event.max_attempts}` : ""})` : ""}${event.error ? `: ${event.error}` : ""}`,
          }));
        else if (event.status === "error") update((s) => ({ ...s, error: event.error ?? "The download failed" }));
        else if (event.status !== "completed") update((s) => ({ ...s, message: event.message ?? event.status }));
      });
      update((s) => ({
        ...s,
        running: false,
        done,
        message: done ? null : s.message,
        error: s.error ?? (done ? null : "The download stopped before it finished. Pull again to resume."),
      }));
      void catalog.reload();
    } catch (e) {
      update((s) => ({ ...s, running: false, error: api.errorMessage(e) }));
    }
  };

  return (
    <div className="page">
      <h1 ref={heading} tabIndex={-1}>
        Models
      </h1>
      <section className="card" aria-labelledby="catalog-heading">
        <h2 id="catalog-heading">Catalog</h2>
        {catalog.loading && !catalog.data ? <Loading /> : null}
        <ErrorText error={catalog.error} />
        {catalog.data && <Catalog models={catalog.data} onChanged={() => (void catalog.reload(), void mine.reload())} onAddMine={(name) => setPreset((p) => ({ name, n: (p?.n ?? 0) + 1 }))} />}
      </section>
      <div className="two-col">
        <div>
          <LibrarySearch onPull={(name) => void startPull(name)} pulling={!!pull?.running} />
          {pull && <PullProgress pull={pull} />}
        </div>
        <section className="card" aria-labelledby="mine-heading">
          <h2 id="mine-heading">My models</h2>
          {mine.loading && !mine.data ? <Loading /> : null}
          <ErrorText error={mine.error} />
          {mine.data && <MyModels catalog={catalog.data ?? []} mine={mine.data} onChanged={() => void mine.reload()} preset={preset} />}
        </section>
      </div>
    </div>
  );
}
