import { useMutation, useQuery } from "@tanstack/react-query";
import { useId, useState, type FormEvent } from "react";
import * as api from "../api";
import { ApiError, client, invalidate, keys, queries } from "../api";
import { ErrorText, Loading, announce } from "../components";
import { href } from "../navigation";

/**
 * The collection's embedding model (hybrid retrieval): shows the current one and sets or clears
 * it. Every catalog model is offered; the server tries the chosen one on a word and answers 400
 * for a model that cannot embed (a chat model), whose detail is shown on the field.
 */
export function EmbeddingModelControl({ collection }: { collection: api.Collection }) {
  const models = useQuery(queries.models());
  const current = collection.embedding_model;
  const [choice, setChoice] = useState(current ?? "");
  // The saved model (here or elsewhere) becomes the choice shown.
  const [shownCurrent, setShownCurrent] = useState(current);
  if (shownCurrent !== current) {
    setShownCurrent(current);
    setChoice(current ?? "");
  }
  const save = useMutation({
    mutationFn: (model: string | null) => api.answer(client.PUT("/collections/{id}/embedding", { params: { path: { id: collection.id } }, body: { model } })),
    onSuccess: (saved, model) => {
      const jobs = saved.job_ids.length;
      announce(
        model === null
          ? "Embedding model removed: search is by keyword only."
          : `Embedding model set to ${saved.embedding_model}.${jobs > 0 ? ` ${jobs} ingestion job${jobs === 1 ? "" : "s"} started to embed the documents.` : ""}`,
      );
      return invalidate(keys.collections, keys.pipelines);
    },
  });
  const fieldId = useId();
  const noteId = `${fieldId}-note`;
  // A refused model is the field's problem (400 with a detail); anything else is shown under the form.
  const fieldProblem = save.error instanceof ApiError && save.error.status === 400 ? save.error.detail : null;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate(choice === "" ? null : choice);
  };
  const catalog = models.data ?? [];
  // The current model stays selectable even if it has since left the catalog.
  const names = current && !catalog.some((m) => m.model_name === current) ? [current, ...catalog.map((m) => m.model_name)] : catalog.map((m) => m.model_name);
  return (
    <section className="card" aria-labelledby={`${fieldId}-heading`}>
      <h2 id={`${fieldId}-heading`}>Search by meaning</h2>
      <p className="embedding-current">
        Embedding model: <strong>{current ?? "none"}</strong>
        {current ? " · searches combine keywords and meaning (hybrid)" : " · search is by keyword only"}
      </p>
      {models.isPending ? <Loading label="Loading the model catalog…" /> : null}
      <ErrorText error={models.error} />
      {models.data && catalog.length === 0 && !current ? (
        <p className="empty">
          No models in the catalog yet. <a href={href("models")}>Pull an embedding model</a> (for example nomic-embed-text) to search this collection by meaning.
        </p>
      ) : (
        models.data && (
          <form className="inline-form" onSubmit={submit} noValidate>
            <label htmlFor={fieldId}>Embedding model</label>
            <select
              id={fieldId}
              value={choice}
              onChange={(e) => {
                setChoice(e.target.value);
                save.reset();
              }}
              aria-invalid={fieldProblem ? true : undefined}
              aria-describedby={noteId}
              disabled={save.isPending}
            >
              <option value="">None (keyword search only)</option>
              {names.map((name) => (
                <option key={name} value={name}>
                  {name}
                </option>
              ))}
            </select>
            <button type="submit" disabled={save.isPending || choice === (current ?? "")}>
              {save.isPending ? "Saving…" : choice === "" && current ? "Turn off" : "Save"}
            </button>
            <p className={fieldProblem ? "field-error" : "hint"} id={noteId} role={fieldProblem ? "alert" : undefined}>
              {fieldProblem ?? "Pick a model made for embeddings (such as nomic-embed-text); its documents are embedded by an ingestion job. Changing the model embeds them again."}
            </p>
          </form>
        )
      )}
      {!fieldProblem && <ErrorText error={save.error} />}
    </section>
  );
}

const MODES: Array<{ id: api.SearchMode; label: string }> = [
  { id: "hybrid", label: "Hybrid (keywords and meaning)" },
  { id: "keyword", label: "Keywords only" },
  { id: "semantic", label: "Meaning only" },
];

/** The search's mode, offered only when the collection has an embedding model (without one, search is by keyword). */
export function SearchModeSelect({ embeddingModel, mode, onChange }: { embeddingModel: string | null; mode: api.SearchMode; onChange: (mode: api.SearchMode) => void }) {
  if (!embeddingModel) return null;
  return (
    <>
      <label htmlFor="search-mode" className="sr-only">
        Search mode
      </label>
      <select id="search-mode" className="search-mode" value={mode} onChange={(e) => onChange(e.target.value as api.SearchMode)}>
        {MODES.map((m) => (
          <option key={m.id} value={m.id}>
            {m.label}
          </option>
        ))}
      </select>
    </>
  );
}
