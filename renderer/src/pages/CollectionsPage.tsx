import { useMutation, useQuery } from "@tanstack/react-query";
import { useEffect, useRef, useState, type FormEvent } from "react";
import * as api from "../api";
import { client, invalidate, keys, queries } from "../api";
import { ConfirmButton, Empty, ErrorText, Loading, announce, usePageHeading } from "../components";
import { formatBytes, formatTime } from "../format";
import { COLLECTION_NAME_RULE, collectionNameProblem } from "../names";
import { href } from "../navigation";
import { EmbeddingModelControl } from "./EmbeddingModelControl";
import { PermissionNotice } from "./PermissionNotice";
import { SearchPanel } from "./SearchPanel";
import { ownerGroup } from "./owner-group";
import { FirstRun, useFirstRun } from "./FirstRun";

function CreateCollectionForm({ groups, onCreated }: { groups: api.Group[]; onCreated: (id: string) => void }) {
  const [name, setName] = useState("");
  const [chosenGroup, setGroup] = useState("");
  const group = ownerGroup(chosenGroup, groups);
  const create = useMutation({
    mutationFn: () => api.answer(client.POST("/collections", { body: { name, owner_group_id: group } })),
    onSuccess: (created) => {
      announce(`Collection ${name} created.`);
      setName("");
      onCreated(created.id);
      return invalidate(keys.collections);
    },
  });
  const problem = name ? collectionNameProblem(name) : null;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (!collectionNameProblem(name) && group) create.mutate();
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
            {problem ?? `Use ${COLLECTION_NAME_RULE}.`}
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
        <button type="submit" className="primary" disabled={create.isPending || !name || !!problem}>
          {create.isPending ? "Creating…" : "Create collection"}
        </button>
      </div>
      <ErrorText error={create.error} />
    </form>
  );
}

function CollectionRow({
  collection,
  groupName,
  isNew,
}: {
  collection: api.Collection;
  groupName: string;
  /** Just created: its link takes focus. */
  isNew: boolean;
}) {
  const link = useRef<HTMLAnchorElement>(null);
  useEffect(() => {
    if (isNew) link.current?.focus();
  }, [isNew]);
  const del = useMutation({
    mutationFn: () => client.DELETE("/collections/{id}", { params: { path: { id: collection.id } } }),
    onSuccess: () => {
      announce(`Collection ${collection.name} deleted.`);
      // Its pipelines go with it.
      return invalidate(keys.collections, keys.pipelines);
    },
  });
  return (
    <tr aria-label={`collection ${collection.name}`}>
      <th scope="row">
        <a ref={link} href={href("collections", collection.id)}>
          {collection.name}
        </a>
      </th>
      <td data-label="Group">{groupName}</td>
      <td className="num" data-label="Documents">
        {collection.index_status === "damaged" ? (
          <span className="badge damaged" title="The index file cannot be read. Re-run this collection's pipeline to rebuild it; the damaged file is kept.">
            index damaged: re-run its pipeline to rebuild
          </span>
        ) : (
          collection.document_count
        )}
      </td>
      <td className="num" data-label="Chunks">
        {collection.chunk_count}
      </td>
      <td data-label="Created">{formatTime(collection.created_at)}</td>
      <td className="actions-cell">
        <a className="button" href={href("collections", collection.id)} aria-label={`Search ${collection.name}`}>
          Search
        </a>
        <ConfirmButton label="Delete" question={`Delete ${collection.name} and everything indexed in it?`} onConfirm={() => del.mutate()} busy={del.isPending} />
        <ErrorText error={del.error} />
      </td>
    </tr>
  );
}

export function CollectionsPage() {
  const heading = usePageHeading("Collections");
  const collections = useQuery(queries.collections());
  const groups = useQuery(queries.groups());
  const [created, setCreated] = useState<string | null>(null);
  const firstRun = useFirstRun();
  const groupName = (id: string) => groups.data?.find((g) => g.id === id)?.group_name ?? "—";
  return (
    <div className="page">
      <h1 ref={heading} tabIndex={-1}>
        Collections
      </h1>
      {firstRun ? (
        <FirstRun />
      ) : groups.data ? (
        <CreateCollectionForm groups={groups.data.filter((g) => g.is_member)} onCreated={setCreated} />
      ) : (
        <Loading />
      )}
      <ErrorText error={groups.error} />
      <section className="card" aria-labelledby="collections-heading">
        <h2 id="collections-heading">Your collections</h2>
        {collections.isPending ? <Loading /> : null}
        <ErrorText error={collections.error} />
        {collections.data && collections.data.length === 0 && !firstRun && <Empty>No collections yet. Create one above, or add a data source.</Empty>}
        {firstRun && <Empty>No collections yet: the source above brings the first one.</Empty>}
        {collections.data && collections.data.length > 0 && (
          <div className="table-wrap">
            <table className="stack-table">
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
                  <CollectionRow
                    key={c.id}
                    collection={c}
                    groupName={groupName(c.owner_group_id)}
                    isNew={c.id === created}
                  />
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </div>
  );
}

function DocumentsPanel({ collectionId }: { collectionId: string }) {
  const PAGE = 50;
  const [offset, setOffset] = useState(0);
  const docs = useQuery(queries.documents(collectionId, offset, PAGE));
  return (
    <section className="card" aria-labelledby="docs-heading">
      <h2 id="docs-heading">Documents{docs.data ? ` (${docs.data.total})` : ""}</h2>
      {docs.isPending ? <Loading /> : null}
      <ErrorText error={docs.error} />
      {docs.data && docs.data.total === 0 && <Empty>No documents indexed yet. Run a pipeline into this collection.</Empty>}
      {docs.data && docs.data.documents.length > 0 && (
        <div className="table-wrap">
          <table className="stack-table">
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
                  <td className="path" data-label="Path">
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
                  <td className="num" data-label="Size">
                    {formatBytes(d.size)}
                  </td>
                  <td className="num" data-label="Chunks">
                    {d.chunk_count}
                  </td>
                  <td data-label="Indexed">{formatTime(d.indexed_at)}</td>
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
  const collections = useQuery(queries.collections());
  const collection = collections.data?.find((c) => c.id === collectionId);
  const heading = usePageHeading(collection ? `${collection.name} · Collections` : "Collection");
  return (
    <div className="page">
      <p>
        <a href={href("collections")}>← Collections</a>
      </p>
      {collections.isPending ? <Loading /> : null}
      <ErrorText error={collections.error} />
      {collections.data && !collection ? (
        <Empty>This collection does not exist or you do not have access to it.</Empty>
      ) : (
        <>
          <h1 ref={heading} tabIndex={-1}>
            {collection?.name ?? "Collection"}
          </h1>
          {collection && (
            <p className="muted">
              {collection.document_count} documents · {collection.chunk_count} chunks ·{" "}
              <a href={href("collections", collectionId, "ask")}>Ask this collection</a>
            </p>
          )}
          {collection && <PermissionNotice collection={collection} />}
          <SearchPanel collectionId={collectionId} embeddingModel={collection?.embedding_model ?? null} />
          {collection && <EmbeddingModelControl collection={collection} />}
          <DocumentsPanel collectionId={collectionId} />
        </>
      )}
    </div>
  );
}
