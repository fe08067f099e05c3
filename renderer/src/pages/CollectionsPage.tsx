import { useEffect, useState, type FormEvent } from "react";
import * as api from "../api";
import { ConfirmButton, Empty, ErrorText, Loading, formatBytes, formatTime, useAction, useLoad } from "../components";
import { href } from "../router";

function nameProblem(name: string): string | null {
  if (!name) return "Enter a name.";
  if (name.length > 100) return "Use at most 100 characters.";
  if (!/^[A-Za-z0-9_]+$/.test(name)) return "Use only letters, digits and underscores.";
  return null;
}

function CreateCollectionForm({ groups, onCreated }: { groups: api.Group[]; onCreated: () => void }) {
  const [name, setName] = useState("");
  const [group, setGroup] = useState(groups[0]?.id ?? "");
  const create = useAction(async () => {
    await api.createCollection(name, group);
    setName("");
    onCreated();
  });
  useEffect(() => {
    if (!group && groups[0]) setGroup(groups[0].id);
  }, [groups, group]);
  const problem = name ? nameProblem(name) : null;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (!nameProblem(name) && group) void create.run();
  };
  if (groups.length === 0)
    return (
      <div className="card">
        <h2>Create a collection</h2>
        <Empty>
          Collections belong to a group. <a href={href("groups")}>Create a group</a> first.
        </Empty>
      </div>
    );
  return (
    <form className="card" onSubmit={submit} aria-label="Create collection" noValidate>
      <h2>Create a collection</h2>
      <div className="form-grid">
        <div className="field">
          <label htmlFor="collection-name">Name</label>
          <input
            id="collection-name"
            value={name}
            onChange={(e) => setName(e.target.value)}
            aria-invalid={problem ? true : undefined}
            aria-describedby="collection-name-note"
            spellCheck={false}
          />
          <p className={problem ? "field-error" : "hint"} id="collection-name-note">
            {problem ?? "Letters, digits and underscores."}
          </p>
        </div>
        <div className="field">
          <label htmlFor="collection-group">Owner group</label>
          <select id="collection-group" value={group} onChange={(e) => setGroup(e.target.value)}>
            {groups.map((g) => (
              <option key={g.id} value={g.id}>
                {g.group_name}
              </option>
            ))}
          </select>
        </div>
      </div>
      <div className="form-actions">
        <button type="submit" className="primary" disabled={create.busy || !name || !!problem}>
          {create.busy ? "Creating…" : "Create collection"}
        </button>
      </div>
      <ErrorText error={create.error} />
    </form>
  );
}

function CollectionRow({ collection, groupName, onDeleted }: { collection: api.Collection; groupName: string; onDeleted: () => void }) {
  const del = useAction(async () => {
    await api.deleteCollection(collection.id);
    onDeleted();
  });
  return (
    <tr aria-label={`collection ${collection.name}`}>
      <th scope="row">
        <a href={href("collections", collection.id)}>{collection.name}</a>
      </th>
      <td>{groupName}</td>
      <td className="num" data-label="documents">
        {collection.index_status === "damaged" ? (
          <span className="badge damaged" title="The index file cannot be read. Re-run this collection's pipeline to rebuild it; the damaged file is kept.">
            index damaged: re-run its pipeline to rebuild
          </span>
        ) : (
          collection.document_count
        )}
      </td>
      <td className="num">{collection.chunk_count}</td>
      <td>{formatTime(collection.created_at)}</td>
      <td className="actions-cell">
        <a className="button" href={href("collections", collection.id)}>
          Search
        </a>
        <ConfirmButton label="Delete" question={`Delete ${collection.name} and everything indexed in it?`} onConfirm={() => void del.run()} busy={del.busy} />
        <ErrorText error={del.error} />
      </td>
    </tr>
  );
}

export function CollectionsPage() {
  const collections = useLoad(api.listCollections);
  const groups = useLoad(api.listGroups);
  const groupName = (id: string) => groups.data?.find((g) => g.id === id)?.group_name ?? "—";
  return (
    <div className="page">
      <h1>Collections</h1>
      {groups.data ? <CreateCollectionForm groups={groups.data.filter((g) => g.is_member)} onCreated={() => void collections.reload()} /> : <Loading />}
      <ErrorText error={groups.error} />
      <section className="card" aria-labelledby="collections-heading">
        <h2 id="collections-heading">Your collections</h2>
        {collections.loading && !collections.data ? <Loading /> : null}
        <ErrorText error={collections.error} />
        {collections.data && collections.data.length === 0 && <Empty>No collections yet. Create one above, or add a data source.</Empty>}
        {collections.data && collections.data.length > 0 && (
          <div className="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Group</th>
                  <th scope="col" className="num">
                    Documents
                  </th>
                  <th scope="col" className="num">
                    Chunks
                  </th>
                  <th scope="col">Created</th>
                  <th scope="col">
                    <span className="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {collections.data.map((c) => (
                  <CollectionRow key={c.id} collection={c} groupName={groupName(c.owner_group_id)} onDeleted={() => void collections.reload()} />
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </div>
  );
}

function SearchPanel({ collectionId }: { collectionId: string }) {
  const [query, setQuery] = useState("");
  const [submitted, setSubmitted] = useState("");
  const [results, setResults] = useState<api.SearchHit[] | null>(null);
  const search = useAction(async (q: string) => {
    setResults((await api.searchCollection(collectionId, q, 20)).results);
    setSubmitted(q);
  });
  return (
    <section className="card" aria-labelledby="search-heading">
      <h2 id="search-heading">Search</h2>
      <form
        role="search"
        className="inline-form"
        onSubmit={(e) => {
          e.preventDefault();
          if (query.trim()) void search.run(query.trim());
        }}
      >
        <label htmlFor="search-q" className="sr-only">
          Search this collection
        </label>
        <input id="search-q" type="search" value={query} onChange={(e) => setQuery(e.target.value)} placeholder="Search words or phrases…" />
        <button type="submit" className="primary" disabled={search.busy || !query.trim()}>
          {search.busy ? "Searching…" : "Search"}
        </button>
      </form>
      <ErrorText error={search.error} />
      {results && results.length === 0 && <Empty>No matches for “{submitted}”.</Empty>}
      {results && results.length > 0 && (
        <ol className="results" aria-label="Search results">
          {results.map((hit) => (
            <li key={`${hit.document_id}:${hit.chunk_index}`} className="result">
              <div className="result-title">{hit.title || hit.path}</div>
              <div className="result-path" title="Source path">
                {hit.path}
              </div>
              {/* The server HTML-escapes the text and only adds <mark> around matches, so this is safe to render as HTML. */}
              <p className="snippet" dangerouslySetInnerHTML={{ __html: hit.snippet }} />
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

function DocumentsPanel({ collectionId }: { collectionId: string }) {
  const PAGE = 50;
  const [offset, setOffset] = useState(0);
  const docs = useLoad(() => api.listDocuments(collectionId, offset, PAGE), [collectionId, offset]);
  return (
    <section className="card" aria-labelledby="docs-heading">
      <h2 id="docs-heading">Documents{docs.data ? ` (${docs.data.total})` : ""}</h2>
      {docs.loading && !docs.data ? <Loading /> : null}
      <ErrorText error={docs.error} />
      {docs.data && docs.data.total === 0 && <Empty>No documents indexed yet. Run a pipeline into this collection.</Empty>}
      {docs.data && docs.data.documents.length > 0 && (
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Path</th>
                <th scope="col" className="num">
                  Size
                </th>
                <th scope="col" className="num">
                  Chunks
                </th>
                <th scope="col">Indexed</th>
              </tr>
            </thead>
            <tbody>
              {docs.data.documents.map((d) => (
                <tr key={d.document_id}>
                  <td className="path">
                    {/* Drive documents are stored under their file id: show the file's name above it. */}
                    {d.title && !d.path.includes(d.title) ? (
                      <>
                        <div className="doc-title">{d.title}</div>
                        <div className="muted small">{d.path}</div>
                      </>
                    ) : (
                      d.path
                    )}
                  </td>
                  <td className="num">{formatBytes(d.size)}</td>
                  <td className="num">{d.chunk_count}</td>
                  <td>{formatTime(d.indexed_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {docs.data && docs.data.total > PAGE && (
        <div className="pager">
          <button type="button" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))}>
            Previous
          </button>
          <span>
            {offset + 1}–{Math.min(offset + PAGE, docs.data.total)} of {docs.data.total}
          </span>
          <button type="button" disabled={offset + PAGE >= docs.data.total} onClick={() => setOffset(offset + PAGE)}>
            Next
          </button>
        </div>
      )}
    </section>
  );
}

export function CollectionPage({ collectionId }: { collectionId: string }) {
  const collections = useLoad(api.listCollections);
  const collection = collections.data?.find((c) => c.id === collectionId);
  return (
    <div className="page">
      <p>
        <a href={href("collections")}>← Collections</a>
      </p>
      {collections.loading && !collections.data ? <Loading /> : null}
      <ErrorText error={collections.error} />
      {collections.data && !collection ? (
        <Empty>This collection does not exist or you do not have access to it.</Empty>
      ) : (
        <>
          <h1>{collection?.name ?? "Collection"}</h1>
          {collection && (
            <p className="muted">
              {collection.document_count} documents · {collection.chunk_count} chunks
            </p>
          )}
          <SearchPanel collectionId={collectionId} />
          <DocumentsPanel collectionId={collectionId} />
        </>
      )}
    </div>
  );
}
