import { useMutation, useQuery } from "@tanstack/react-query";
import { useNavigate } from "react-router";
import { useState, type ChangeEvent, type FormEvent } from "react";
import * as api from "../api";
import { client, invalidate, invalidateSourceLists, keys, queries, queryClient } from "../api";
import { ConfirmButton, Empty, ErrorText, Field, Loading, usePageHeading } from "../components";
import { formatTime } from "../format";
import { SOURCE_NAME_MAX } from "../names";
import { href } from "../navigation";
import { AddDriveSourceForm, DriveConnection, DriveSourceTools, useDrive } from "./DrivePanel";
import { ownerGroup } from "./owner-group";
import { FirstRun, useFirstRun } from "./FirstRun";
import { useInstanceActions } from "./instance-actions";
import { NEW_SMB_VALUES, SMB_FIELD_LABELS, SmbFields, smbFailureField, smbProblems, smbSourceBody, type SmbValues } from "./SmbFields";

type SmbForm = SmbValues & { group: string; name: string };

const SMB_FORM_LABELS: Record<keyof SmbForm, string> = { ...SMB_FIELD_LABELS, group: "Owner group", name: "Source name" };

function validate(f: SmbForm): Partial<Record<keyof SmbForm, string>> {
  const problems: Partial<Record<keyof SmbForm, string>> = {};
  if (!f.group) problems.group = "Choose the group that will own this source.";
  if (!f.name.trim()) problems.name = "Give the source a name.";
  else if (f.name.trim().length > SOURCE_NAME_MAX) problems.name = `Use at most ${SOURCE_NAME_MAX} characters.`;
  return { ...problems, ...smbProblems(f) };
}

/** The group a new source will belong to: every source form asks it the same way. */
function OwnerGroupField({
  id,
  groups,
  value,
  onChange,
  problem,
}: {
  id: string;
  groups: api.Group[];
  value: string;
  onChange: (e: ChangeEvent<HTMLSelectElement>) => void;
  problem?: string;
}) {
  return (
    <Field id={id} label="Owner group" problem={problem}>
      {(p) => (
        <select {...p} value={value} onChange={onChange}>
          {groups.map((g) => (
            <option key={g.id} value={g.id}>
              {g.group_name}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

function AddSmbSourceForm({ groups, onCreated }: { groups: api.Group[]; onCreated: (created: api.CreatedSmbSource) => void }) {
  const [entered, setF] = useState<SmbForm>({ group: "", name: "", ...NEW_SMB_VALUES });
  const f = { ...entered, group: ownerGroup(entered.group, groups) };
  const [sourcePermissions, setSourcePermissions] = useState(false);
  const [submitted, setSubmitted] = useState(false);
  const create = useMutation({
    mutationFn: () =>
      api.answer(
        client.POST("/data_sources/smb/{group_id}", {
          params: { path: { group_id: f.group } },
          body: {
            data_source: { data_source_name: f.name.trim() },
            smb_source: smbSourceBody(f, sourcePermissions),
          },
        }),
      ),
    onSuccess: (created) => {
      setF((prev) => ({ ...prev, name: "", password: "" }));
      setSubmitted(false);
      onCreated(created);
      return invalidateSourceLists();
    },
  });
  // A failed connection check puts its hint on the field to fix; the note under the form points there.
  const failure = create.error instanceof api.ApiError && create.error.reason && create.error.hint ? create.error : null;
  const failureField = failure ? smbFailureField(failure.reason!, f) : null;
  const problems: Partial<Record<keyof SmbForm, string>> = submitted ? validate(f) : {};
  if (failure && failureField && !problems[failureField]) problems[failureField] = failure.hint!;
  const formError = failure
    ? failureField
      ? `${failure.detail}: the connection check failed. See the note under ${SMB_FORM_LABELS[failureField]}.`
      : `${failure.detail}: ${failure.hint}`
    : create.error;
  const set = (key: keyof SmbForm) => (e: { target: { value: string } }) => setF((prev) => ({ ...prev, [key]: e.target.value }));
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setSubmitted(true);
    if (Object.keys(validate(f)).length === 0) create.mutate();
  };
  if (groups.length === 0)
    return (
      <div className="card">
        <h2>Add an SMB share</h2>
        <Empty>
          You need to be in a group first. <a href={href("groups")}>Create a group</a>.
        </Empty>
      </div>
    );
  return (
    <form className="card" onSubmit={submit} aria-label="Add SMB share" noValidate>
      <h2>Add an SMB share</h2>
      <p className="muted">The connection is checked before anything is saved. A collection and a pipeline are created with it.</p>
      <div className="form-grid">
        <OwnerGroupField id="smb-group" groups={groups} value={f.group} onChange={set("group")} problem={problems.group} />
        <Field id="smb-name" label="Source name" problem={problems.name}>
          {(p) => <input {...p} value={f.name} onChange={set("name")} placeholder="Finance share" />}
        </Field>
        <SmbFields idPrefix="smb" values={f} problems={problems} onChange={(key, value) => setF((prev) => ({ ...prev, [key]: value }))} />
        <div className="field checkbox-field">
          <label>
            <input type="checkbox" checked={sourcePermissions} onChange={(e) => setSourcePermissions(e.target.checked)} aria-describedby="smb-permissions-hint" />{" "}
            Use the file server's permissions
          </label>
          <p id="smb-permissions-hint" className="hint">
            Each person finds only the files their linked Windows account may read on the server; without a link, only the files everyone may read.
          </p>
        </div>
      </div>
      <div className="form-actions">
        <button type="submit" className="primary" disabled={create.isPending}>
          {create.isPending ? "Checking connection…" : "Add share"}
        </button>
      </div>
      <ErrorText error={formError} id="smb-form-error" />
    </form>
  );
}

function AddFolderSourceForm({ groups, onCreated }: { groups: api.Group[]; onCreated: (created: api.CreatedFolderSource) => void }) {
  const status = useQuery(queries.folderStatus());
  const [entered, setF] = useState({ group: "", name: "", path: "" });
  const f = { ...entered, group: ownerGroup(entered.group, groups) };
  const [submitted, setSubmitted] = useState(false);
  const create = useMutation({
    mutationFn: () =>
      api.answer(
        client.POST("/data_sources/folder/{group_id}", {
          params: { path: { group_id: f.group } },
          body: { data_source: { data_source_name: f.name.trim() }, folder_source: { path: f.path.trim() } },
        }),
      ),
    onSuccess: (created) => {
      setF((prev) => ({ ...prev, name: "", path: "" }));
      setSubmitted(false);
      onCreated(created);
      return invalidateSourceLists();
    },
  });
  const problems: { name?: string; path?: string } = {};
  if (submitted && !f.name.trim()) problems.name = "Give the source a name.";
  if (submitted && !f.path.trim()) problems.path = "Enter the folder's full path on the Sluice machine.";
  const set = (key: "group" | "name" | "path") => (e: { target: { value: string } }) => setF((prev) => ({ ...prev, [key]: e.target.value }));
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setSubmitted(true);
    if (f.name.trim() && f.path.trim()) create.mutate();
  };
  const actions = useInstanceActions();
  if (groups.length === 0 || status.isPending || actions === "pending") return null;
  // A folder source reads the server's disks: on a LAN server an administrator's to add (issue 34 item 1).
  if (actions === "administrators")
    return (
      <section className="card" aria-labelledby="folder-admin-heading">
        <h2 id="folder-admin-heading">Add a folder</h2>
        <p className="muted" data-admin-note="folders">
          On this server an administrator adds folder sources, since they read the server's own disks.
        </p>
      </section>
    );
  if (status.data && !status.data.enabled)
    return (
      <section className="card" aria-labelledby="folder-off-heading">
        <h2 id="folder-off-heading">Add a folder</h2>
        <p className="muted" role="status">
          Folder sources are off on this machine. The administrator turns them on by listing the folders sources may read in{" "}
          <code>FOLDER_SOURCE_ROOTS</code> and restarting Sluice.
        </p>
      </section>
    );
  const roots = status.data?.roots ?? [];
  return (
    <form className="card" onSubmit={submit} aria-label="Add folder" noValidate>
      <h2>Add a folder</h2>
      <p className="muted">A folder on the Sluice machine, or a network share mounted on it. A collection and a pipeline are created with it.</p>
      <div className="form-grid">
        <OwnerGroupField id="folder-group" groups={groups} value={f.group} onChange={set("group")} />
        <Field id="folder-name" label="Source name" problem={problems.name}>
          {(p) => <input {...p} value={f.name} onChange={set("name")} placeholder="Project documents" />}
        </Field>
        <Field
          id="folder-path"
          label="Folder path"
          problem={problems.path}
          hint={`The full path, inside a folder allowed in FOLDER_SOURCE_ROOTS: ${roots.join(", ")}. Links leading out of it are not read.`}
        >
          {(p) => <input {...p} value={f.path} onChange={set("path")} placeholder={roots[0] ?? ""} autoComplete="off" spellCheck={false} />}
        </Field>
      </div>
      <div className="form-actions">
        <button type="submit" className="primary" disabled={create.isPending}>
          {create.isPending ? "Checking the folder…" : "Add folder"}
        </button>
      </div>
      <ErrorText error={create.error} id="folder-form-error" />
      <ErrorText error={status.error} />
    </form>
  );
}

function SourceRow({
  source,
  groupName,
  driveTools,
}: {
  source: api.DataSource;
  groupName: string;
  driveTools: boolean;
}) {
  const path = { id: source.id };
  const del = useMutation({
    mutationFn: () => client.DELETE("/data_sources/{id}", { params: { path } }),
    onSuccess: invalidateSourceLists,
  });
  const [schedulesNote, setSchedulesNote] = useState("");
  const schedules = useMutation({
    mutationFn: (paused: boolean) =>
      api.answer(paused ? client.POST("/data_sources/{id}/schedules/pause", { params: { path } }) : client.POST("/data_sources/{id}/schedules/resume", { params: { path } })),
    onSuccess: ({ schedules_changed: n }, paused) => {
      setSchedulesNote(`${n} schedule${n === 1 ? "" : "s"} ${paused ? "paused" : "resumed"}.`);
      return invalidate(keys.pipelines);
    },
  });
  const smb = source.smb_source;
  return (
    <li className="card source-row" aria-label={`source ${source.data_source_name}`}>
      <div className="row-between">
        <div>
          <h3>{source.data_source_name}</h3>
          <p className="muted small">
            <span className="badge">{source.kind}</span>{" "}
            {[
              smb ? `\\\\${smb.remote_system_name}${smb.default_ip ? ` (${smb.default_ip}:${smb.port})` : `:${smb.port}`} as ${smb.remote_system_username}` : null,
              smb?.source_permissions ? "file server's permissions" : null,
              source.kind === "drive" ? "Google Drive" : null,
              source.folder_source ? source.folder_source.path : null,
              `group ${groupName}`,
              `added ${formatTime(source.created_at)}`,
            ]
              .filter(Boolean)
              .join(" · ")}
          </p>
        </div>
        <div className="actions">
          {source.kind === "smb" && (
            <a className="button" href={href("sources", source.id)}>
              Browse shares
            </a>
          )}
          {source.collection_id && (
            <a className="button" href={href("collections", source.collection_id)}>
              Collection
            </a>
          )}
          <button type="button" onClick={() => schedules.mutate(true)} disabled={schedules.isPending} title="For when its server is down for maintenance">
            Pause all its schedules
          </button>
          <button type="button" onClick={() => schedules.mutate(false)} disabled={schedules.isPending}>
            Resume its schedules
          </button>
          <ConfirmButton
            label="Delete"
            question={`Delete ${source.data_source_name} and its auto-created collection?`}
            onConfirm={() => del.mutate()}
            busy={del.isPending}
          />
        </div>
      </div>
      <ErrorText error={del.error ?? schedules.error} />
      {schedulesNote && (
        <p className="muted small" role="status">
          {schedulesNote}
        </p>
      )}
      {source.kind === "drive" && driveTools && <DriveSourceTools source={source} />}
    </li>
  );
}

/** After adding a source: "Run it now" starts its pipeline, then opens it to show the run. */
function CreatedNotice({ created }: { created: api.CreatedSmbSource | api.CreatedDriveSource | api.CreatedFolderSource }) {
  const navigate = useNavigate();
  const run = useMutation({
    mutationFn: () => api.answer(client.POST("/data_pipelines/{id}/ingest", { params: { path: { id: created.pipeline.id } } })),
    onSuccess: async (job) => {
      queryClient.setQueryData(queries.ingestStatus(created.pipeline.id).queryKey, job);
      await invalidate(keys.pipelines);
      await navigate(`/pipelines/${encodeURIComponent(created.pipeline.id)}`);
    },
  });
  return (
    <div className="notice" role="status">
      <p>
        Added {created.data_source.data_source_name}. A pipeline was created for it.{" "}
        <button type="button" className="primary" onClick={() => run.mutate()} disabled={run.isPending}>
          {run.isPending ? "Starting…" : "Run it now"}
        </button>
      </p>
      <ErrorText error={run.error} />
    </div>
  );
}

export function SourcesPage() {
  const heading = usePageHeading("Data sources");
  const sources = useQuery(queries.sources());
  const groups = useQuery(queries.groups());
  const [created, setCreated] = useState<api.CreatedSmbSource | api.CreatedDriveSource | api.CreatedFolderSource | null>(null);
  const drive = useDrive();
  const driveReady = drive.state === "ready";
  const driveConnected = drive.state === "ready" && drive.status.connected;
  const myGroups = (groups.data ?? []).filter((g) => g.is_member);
  const groupName = (id: string) => groups.data?.find((g) => g.id === id)?.group_name ?? "—";
  // A new instance's administrator gets the one guided form instead of forms that first need a group.
  const firstRun = useFirstRun();
  const folders = useInstanceActions() === "allowed" ? ", a folder" : "";
  return (
    <div className="page">
      <h1 ref={heading} tabIndex={-1}>
        Data sources
      </h1>
      {/* At the top, where the eye is after adding: the forms above it would push it below the fold. */}
      {created && <CreatedNotice created={created} />}
      {firstRun ? <FirstRun /> : null}
      <div className="two-col" hidden={firstRun}>
        <div>
          {groups.isPending ? <Loading /> : <AddSmbSourceForm groups={myGroups} onCreated={setCreated} />}
          <ErrorText error={groups.error} />
          {groups.data && <AddFolderSourceForm groups={myGroups} onCreated={setCreated} />}
          <DriveConnection drive={drive} />
          {driveConnected && groups.data && myGroups.length > 0 && (
            <div className="card">
              <AddDriveSourceForm groups={myGroups} onCreated={setCreated} />
            </div>
          )}
        </div>
        <section aria-labelledby="sources-heading">
          <h2 id="sources-heading">Your sources</h2>
          {sources.isPending ? <Loading /> : null}
          <ErrorText error={sources.error} />
          {sources.data && sources.data.length === 0 && <Empty>
              No data sources yet. Add an SMB share{folders}
              {driveReady ? " or a Google Drive source" : ""} to start.
            </Empty>}
          <ul className="plain">
            {(sources.data ?? []).map((s) => (
              <SourceRow key={s.id} source={s} groupName={groupName(s.owner_group_id)} driveTools={driveReady} />
            ))}
          </ul>
        </section>
      </div>
    </div>
  );
}

function FolderIcon() {
  return (
    <svg className="icon" viewBox="0 0 24 24" width="20" height="20" aria-hidden="true" focusable="false">
      <path d="M3 6.5A1.5 1.5 0 0 1 4.5 5h4.6l2 2h8.4A1.5 1.5 0 0 1 21 8.5v9a1.5 1.5 0 0 1-1.5 1.5h-15A1.5 1.5 0 0 1 3 17.5z" fill="currentColor" />
    </svg>
  );
}

export function ShareBrowser({ sourceId }: { sourceId: string }) {
  const listing = useQuery(queries.shares(sourceId));
  const sources = useQuery(queries.sources());
  const source = sources.data?.find((s) => s.id === sourceId);
  const shares = listing.data ? Object.entries(listing.data.shares) : [];
  const heading = usePageHeading(source ? `Shares on ${source.data_source_name}` : "Shares");
  return (
    <div className="page">
      <p>
        <a href={href("sources")}>← Data sources</a>
      </p>
      <div className="row-between">
        <h1 ref={heading} tabIndex={-1}>
          Shares{source ? ` on ${source.data_source_name}` : ""}
        </h1>
        <button type="button" onClick={() => void listing.refetch()} disabled={listing.isFetching}>
          Refresh
        </button>
      </div>
      {listing.isPending ? <Loading label="Connecting to the file server…" /> : null}
      <ErrorText error={listing.error} />
      {listing.data && shares.length === 0 && <Empty>The server lists no shares.</Empty>}
      <div className="share-grid">
        {shares.map(([share, entries]) => (
          <section key={share} className="card share" aria-label={`share ${share}`}>
            <h2 className="share-name">
              <FolderIcon /> {share}
            </h2>
            {Array.isArray(entries) ? (
              entries.length === 0 ? (
                <Empty>Empty share.</Empty>
              ) : (
                <ul className="entries">
                  {[...entries].sort((a, b) => a.localeCompare(b)).map((entry) => (
                    <li key={entry}>{entry}</li>
                  ))}
                </ul>
              )
            ) : (
              <p className="error">Cannot open: {entries.error}</p>
            )}
          </section>
        ))}
      </div>
    </div>
  );
}
