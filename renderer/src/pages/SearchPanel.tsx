import { useMutation, useQuery } from "@tanstack/react-query";
import { useEffect, useId, useRef, useState, type KeyboardEvent } from "react";
import * as api from "../api";
import { client } from "../api";
import { ErrorText, announce, copyText } from "../components";
import { desktopOpener } from "../desktop";
import { formatPlace } from "../format";
import { FILE_TYPES, listOfWords, locationForms, queryWords } from "./search-words";
import { SearchModeSelect } from "./EmbeddingModelControl";

const TOP_K = 20;

interface Filters {
  /** An index into FILE_TYPES, or "" for any type. */
  type: string;
  folder: string;
}

interface Answer {
  query: string;
  filters: Filters;
  documents: api.DocumentResult[];
  matched: "all" | "any";
}

/** Up/Down (and Home/End) move between results; each result is a focusable article, so Tab reaches them too. */
function moveBetweenResults(event: KeyboardEvent<HTMLOListElement>) {
  const items = [...event.currentTarget.querySelectorAll<HTMLElement>("article.result")];
  const at = items.indexOf(document.activeElement as HTMLElement);
  if (at < 0) return;
  const next =
    event.key === "ArrowDown" ? items[at + 1] : event.key === "ArrowUp" ? items[at - 1] : event.key === "Home" ? items[0] : event.key === "End" ? items[items.length - 1] : undefined;
  if (!next) return;
  event.preventDefault();
  next.focus();
}

/** " in PDF files under reports/2024": what the filters narrowed the answer to, said after its count. */
function filterWords(filters: Filters): string {
  const type = filters.type === "" ? "" : ` in ${FILE_TYPES[Number(filters.type)].label}`;
  return `${type}${filters.folder ? ` under ${filters.folder}` : ""}`;
}

/** The one location last copied (its result and form), so a single "Copied" shows at a time. */
interface CopyMark {
  copied: string | null;
  setCopied: (key: string | null) => void;
}

/** One form of a document's location, selectable as text, with a Copy button that says "Copied" (and is heard saying it). */
function CopyableLocation({ id, label, name, value, title, mark }: { id: string; label: string; name: string; value: string; title: string; mark: CopyMark }) {
  const [failed, setFailed] = useState(false);
  const copy = async () => {
    const ok = await copyText(value);
    setFailed(!ok);
    mark.setCopied(ok ? id : null);
    announce(ok ? `Copied the ${name} of ${title}.` : `Could not copy. Select the ${name} and press Ctrl+C.`);
  };
  return (
    <div className="location-form">
      <dt>{label}</dt>
      <dd>
        <code className="location-value">{value}</code>
        <span className="location-actions">
          <button type="button" className="small-button" data-copy={value} aria-label={`Copy ${name} of ${title}`} onClick={() => void copy()}>
            Copy
          </button>
          {mark.copied === id && (
            <span className="copied" data-copied={value}>
              Copied
            </span>
          )}
          {failed && <span className="field-error">Select it and press Ctrl+C</span>}
        </span>
      </dd>
    </div>
  );
}

/** The desktop app's "Open": the document with this machine's default app, where the machine reaches it. */
function OpenButton({ location, title, page }: { location: api.DocumentLocation; title: string; page: number | null }) {
  const opener = desktopOpener();
  const open = useMutation({
    mutationFn: async () => {
      // At the best passage's page, where the system's PDF viewer takes one (main/open-location.ts).
      const problem = await opener!.openLocation(location, page);
      if (problem) throw new Error(problem);
    },
  });
  if (!opener || (!location.path && !location.url)) return null;
  return (
    <div className="result-open">
      <button type="button" onClick={() => open.mutate()} disabled={open.isPending} aria-label={`Open ${title}`}>
        {open.isPending ? "Opening…" : "Open"}
      </button>
      <ErrorText error={open.error} />
    </div>
  );
}

function DocumentResultItem({ doc, index, onFolder, mark }: { doc: api.DocumentResult; index: number; onFolder: (folder: string) => void; mark: CopyMark }) {
  const title = doc.title || doc.path.split("/").pop() || doc.path;
  const forms = locationForms(doc.location);
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: results are reached with the arrow keys (moveBetweenResults), so each one takes focus
    <article className="result" tabIndex={0} aria-labelledby={`result-${index}-title`} data-document-id={doc.document_id}>
      <h4 className="result-title" id={`result-${index}-title`}>
        {title}
      </h4>
      <p className="result-meta muted small">
        {doc.type && <span className="type-badge">{doc.type.toUpperCase()}</span>}
        {doc.folder ? (
          <>
            {" "}
            in{" "}
            <button type="button" className="link-button" onClick={() => onFolder(doc.folder)} aria-label={`Only results in folder ${doc.folder}`}>
              {doc.folder}
            </button>
          </>
        ) : null}
      </p>
      <ul className="passages" aria-label={`Passages from ${title}`}>
        {doc.passages.map((passage) => (
          <li key={passage.chunk_index} className="passage">
            {formatPlace(passage) && <span className="passage-place small">{formatPlace(passage)}</span>}
            {/* biome-ignore lint/security/noDangerouslySetInnerHtml: the snippet is server-escaped text with <mark> around matches */}
            <span className="snippet" dangerouslySetInnerHTML={{ __html: passage.snippet }} />
          </li>
        ))}
      </ul>
      {forms.length > 0 ? (
        <dl className="result-location" aria-label={`Where ${title} is`}>
          {forms.map((form) => (
            <CopyableLocation key={form.label} id={`${doc.document_id}:${form.label}`} {...form} title={title} mark={mark} />
          ))}
        </dl>
      ) : (
        // Drive answers no location yet (docs/decisions/0091-document-locations.md): what Sluice stored it as, to tell documents apart.
        <p className="result-location muted small">
          Stored as <code>{doc.path}</code>
        </p>
      )}
      <OpenButton location={doc.location} title={title} page={doc.passages[0]?.page ?? null} />
    </article>
  );
}

export function SearchPanel({ collectionId, embeddingModel }: { collectionId: string; embeddingModel: string | null }) {
  const [query, setQuery] = useState("");
  const [mode, setMode] = useState<api.SearchMode>("hybrid");
  const [filters, setFilters] = useState<Filters>({ type: "", folder: "" });
  const [folders, setFolders] = useState<string[]>([]);
  const resultsHeading = useRef<HTMLHeadingElement>(null);
  const folderListId = useId();
  const [copied, setCopiedKey] = useState<string | null>(null);
  const copiedTimer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  // "Copied" stays a few seconds, long enough to be seen, then the button is just Copy again.
  const mark: CopyMark = {
    copied,
    setCopied: (key) => {
      setCopiedKey(key);
      clearTimeout(copiedTimer.current);
      if (key) copiedTimer.current = setTimeout(() => setCopiedKey(null), 4000);
    },
  };
  useEffect(() => () => clearTimeout(copiedTimer.current), []);
  // The search asked for (by Search, or a filter changed after one): each its own cached answer, so a newer one replaces an older without a race.
  const [asked, setAsked] = useState<{ query: string; filters: Filters; mode: api.SearchMode | undefined; n: number } | null>(null);
  const search = useQuery({
    queryKey: ["collections", collectionId, "search", asked],
    queryFn: async ({ signal }) => {
      const wanted = asked!;
      const types = wanted.filters.type === "" ? undefined : FILE_TYPES[Number(wanted.filters.type)].types;
      const query = { q: wanted.query, top_k: TOP_K, group_by: "document" as const, type: types?.join(","), folder: wanted.filters.folder.trim() || undefined, mode: wanted.mode };
      const found = await api.answer(client.GET("/collections/{id}/search", { params: { path: { id: collectionId }, query }, signal }));
      return { query: wanted.query, filters: wanted.filters, documents: found.documents ?? [], matched: found.matched } satisfies Answer;
    },
    enabled: asked !== null,
    staleTime: Number.POSITIVE_INFINITY,
  });
  const answer = search.data ?? null;
  // The last answer stays in view while the next one is fetched, and when it fails.
  const [lastAnswer, setLastAnswer] = useState<Answer | null>(null);
  if (answer && answer !== lastAnswer) setLastAnswer(answer);
  const shown = answer ?? lastAnswer;
  // Each new answer is said once and its folders offered in the filter.
  useEffect(() => {
    if (!answer) return;
    setFolders((known) => [...new Set([...known, ...answer.documents.map((d) => d.folder).filter(Boolean)])].sort());
    const n = answer.documents.length;
    const where = filterWords(answer.filters);
    const q = answer.query;
    announce(
      n === 0
        ? `No matches for ${q}${where}.`
        : `${n} result${n === 1 ? "" : "s"} for ${q}${where}.${answer.matched === "any" ? " Not every word was found: showing results for any of them." : ""}`,
    );
  }, [answer]);
  const runSearch = (query: string, filters: Filters) =>
    // n: asking the same again is a new search (and a new answer to hear), as a press of Search is.
    setAsked((last) => ({ query, filters, mode: embeddingModel ? mode : undefined, n: (last?.n ?? 0) + 1 }));

  // A new answer: focus its heading, so the next Tab or arrow reaches the first result.
  useEffect(() => {
    if (answer) resultsHeading.current?.focus();
  }, [answer]);

  const run = () => {
    if (query.trim()) runSearch(query.trim(), filters);
  };
  const changeFilters = (next: Filters, rerun: boolean) => {
    setFilters(next);
    // A filter changed after a search applies to that search at once; before one, it waits for the first.
    if (rerun && shown) runSearch(shown.query, next);
  };
  const filtered = filters.type !== "" || filters.folder.trim() !== "";
  return (
    <section className="card" aria-labelledby="search-heading">
      <h2 id="search-heading">Search</h2>
      {/* biome-ignore lint/a11y/useSemanticElements: <search> is too new for the browsers we support; role="search" on the form is the long-standing equivalent */}
      <form
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          run();
        }}
      >
        <div className="inline-form">
          <label htmlFor="search-q" className="sr-only">
            Search this collection
          </label>
          <input id="search-q" type="search" value={query} onChange={(e) => setQuery(e.target.value)} placeholder="Search words or phrases…" />
          <SearchModeSelect embeddingModel={embeddingModel} mode={mode} onChange={setMode} />
          <button type="submit" className="primary" disabled={search.isFetching || !query.trim()}>
            {search.isFetching ? "Searching…" : "Search"}
          </button>
        </div>
        <fieldset className="search-filters">
          <legend className="sr-only">Filters</legend>
          <div className="field">
            <label htmlFor="search-type">File type</label>
            <select id="search-type" value={filters.type} onChange={(e) => changeFilters({ ...filters, type: e.target.value }, true)}>
              <option value="">Any type</option>
              {FILE_TYPES.map((t, i) => (
                <option key={t.label} value={String(i)}>
                  {t.label}
                </option>
              ))}
            </select>
          </div>
          <div className="field">
            <label htmlFor="search-folder">Folder</label>
            <input
              id="search-folder"
              value={filters.folder}
              list={folderListId}
              onChange={(e) => changeFilters({ ...filters, folder: e.target.value }, false)}
              aria-describedby="search-folder-hint"
              spellCheck={false}
              placeholder="Any folder"
            />
            <datalist id={folderListId}>
              {folders.map((f) => (
                <option key={f} value={f} />
              ))}
            </datalist>
            <p className="hint" id="search-folder-hint">
              Only documents under this folder; press Enter to apply.
            </p>
          </div>
          {filtered && (
            <button type="button" className="clear-filters" onClick={() => changeFilters({ type: "", folder: "" }, true)}>
              Clear filters
            </button>
          )}
        </fieldset>
      </form>
      <ErrorText error={search.error} />
      {shown && (
        <h3 ref={resultsHeading} tabIndex={-1} className="results-heading" id="results-heading">
          {shown.documents.length === 0
            ? `No matches for “${shown.query}”${filterWords(shown.filters)}.`
            : `${shown.documents.length} result${shown.documents.length === 1 ? "" : "s"} for “${shown.query}”${filterWords(shown.filters)}`}
        </h3>
      )}
      {shown && shown.matched === "any" && shown.documents.length > 0 && (
        <p className="note any-words" data-matched="any">
          No document has all of these words. Showing results for any of: {listOfWords(queryWords(shown.query))}.
        </p>
      )}
      {shown && shown.documents.length > 0 && (
        <ol className="results" aria-labelledby="results-heading" onKeyDown={moveBetweenResults}>
          {shown.documents.map((doc, i) => (
            <li key={doc.document_id}>
              <DocumentResultItem doc={doc} index={i} onFolder={(folder) => changeFilters({ ...filters, folder }, true)} mark={mark} />
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
