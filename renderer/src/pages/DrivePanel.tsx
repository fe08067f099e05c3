import { useMutation, useQuery } from "@tanstack/react-query";
import { useEffect, useRef, useState, type FormEvent } from "react";
import * as api from "../api";
import { client, invalidate, invalidateSourceLists, isApiError, keys, queries } from "../api";
import { AdminSettingNote, ErrorText, Loading } from "../components";
import { desktopBrowserOpener } from "../desktop";
import { formatTime } from "../format";
import { SOURCE_NAME_MAX } from "../names";
import { ownerGroup } from "./owner-group";

const POLL_MS = 1500;
/** Consent rarely takes this long; past it the UI stops polling and says so. */
const POLL_LIMIT_MS = 10 * 60 * 1000;

/** The current screen as a path on this origin, for Google's redirect back (e.g. "/#/sources"). */
function currentReturnPath(): string {
  return `${window.location.pathname || "/"}${window.location.hash || ""}`;
}

/** The callback appends drive_error=<code> to return_to when consent was declined. */
function driveErrorIn(search: string): string | null {
  return new URLSearchParams(search).get("drive_error");
}

export type DriveAvailability =
  | { state: "loading" }
  | { state: "unavailable"; detail: string }
  | { state: "error"; error: unknown }
  | { state: "ready"; status: api.DriveStatus };

/** The Drive connection; a 503 means the instance has no OAuth client, and the Drive controls hide. */
export function useDrive(): DriveAvailability {
  const status = useQuery(queries.drive());
  if (status.data) return { state: "ready", status: status.data };
  if (status.error) return isApiError(status.error, 503) ? { state: "unavailable", detail: status.error.detail } : { state: "error", error: status.error };
  return { state: "loading" };
}

/** A consent under way: where it happens (the system browser, or a popup this page opened) and since when. */
interface Consent {
  via: "desktop" | "popup";
  popup: Window | null;
  started: number;
}

/** Connection status, connect (system browser or popup, then poll until connected, declined, closed or too long) and disconnect. */
export function DriveConnection({ drive }: { drive: DriveAvailability }) {
  const [consent, setConsent] = useState<Consent | null>(null);
  const [error, setError] = useState<unknown>(() => {
    const declined = driveErrorIn(window.location.search);
    return declined ? `Google Drive was not connected (${declined}).` : null;
  });
  // While a consent is under way the status is asked again every POLL_MS; each answer (or failure) is checked below.
  const poll = useQuery({ ...queries.drive(), enabled: consent !== null, refetchInterval: consent ? POLL_MS : false });
  const consentRef = useRef<Consent | null>(null);
  consentRef.current = consent;
  useEffect(
    () => () => {
      const popup = consentRef.current?.popup;
      if (popup && !popup.closed) popup.close();
    },
    [],
  );

  const answeredAt = Math.max(poll.dataUpdatedAt, poll.errorUpdatedAt);
  useEffect(() => {
    if (!consent || answeredAt < consent.started) return;
    const { popup } = consent;
    // Once back on this origin the popup can be read: a declined consent carries drive_error.
    let declined: string | null = null;
    try {
      if (popup && !popup.closed && popup.location.origin === window.location.origin) declined = driveErrorIn(popup.location.search);
    } catch {
      // Still on Google's pages (another origin).
    }
    const failure = poll.isError ? poll.error : null;
    let outcome: { closePopup: boolean; why: unknown } | null = null;
    // A network failure is waited out; any other failure ends the wait.
    if (failure && !isApiError(failure, 0)) outcome = { closePopup: false, why: failure };
    else if (!failure && poll.data?.connected) outcome = { closePopup: true, why: null };
    else if (declined) outcome = { closePopup: true, why: `Google Drive was not connected (${declined}).` };
    else if (popup?.closed) outcome = { closePopup: false, why: "The Google window was closed before Google Drive was connected." };
    else if (Date.now() - consent.started > POLL_LIMIT_MS) outcome = { closePopup: false, why: "Stopped waiting for Google: click Connect Google Drive to try again." };
    if (!outcome) return;
    if (outcome.closePopup && popup && !popup.closed) popup.close();
    setConsent(null);
    if (outcome.why) setError(outcome.why);
  }, [answeredAt, consent, poll.data, poll.error, poll.isError]);

  const cancel = () => {
    if (consent?.popup && !consent.popup.closed) consent.popup.close();
    setConsent(null);
  };

  const disconnect = useMutation({
    mutationFn: () => client.DELETE("/integrations/cloud/drive"),
    onSuccess: () => invalidate(keys.drive),
  });

  const connect = async () => {
    setError(null);
    const openExternal = desktopBrowserOpener();
    // Opened now, inside the click, so popup blockers let it through; pointed at Google once the URL is known.
    const popup = openExternal ? null : window.open("", "sluice-google-drive", "popup,width=520,height=680");
    if (!openExternal && !popup) {
      setError("The browser blocked the Google window: allow popups for this site and try again.");
      return;
    }
    try {
      const { auth_url } = await api.answer(client.POST("/integrations/cloud/drive/connect", { params: { query: { return_to: currentReturnPath() } } }));
      if (openExternal) await openExternal(auth_url);
      else popup!.location.href = auth_url;
      // Only answers asked for from now on count.
      setConsent({ via: openExternal ? "desktop" : "popup", popup, started: Date.now() });
    } catch (e) {
      if (popup && !popup.closed) popup.close();
      setError(e);
    }
  };
  const waiting = consent?.via ?? null;

  return (
    <section className="card" aria-labelledby="drive-heading">
      <h2 id="drive-heading">Google Drive</h2>
      {drive.state === "loading" && <Loading />}
      {drive.state === "unavailable" && (
        <div data-drive="unavailable">
          <AdminSettingNote feature="Google Drive" settings={["GOOGLE_CLIENT_ID", "GOOGLE_CLIENT_SECRET"]} readme="Google Drive" />
        </div>
      )}
      {drive.state === "error" && <ErrorText error={drive.error} />}
      {drive.state === "ready" && drive.status.connected && (
        <>
          <p data-drive="connected">
            <span className="badge status-active">connected</span> as <strong>{drive.status.email ?? drive.status.provider_subject ?? "—"}</strong>
          </p>
          <p className="muted small">
            Since {formatTime(drive.status.connected_at)} · access: {drive.status.scopes.length ? drive.status.scopes.map(scopeLabel).join(", ") : "—"}
          </p>
          <div className="actions">
            <button type="button" onClick={() => disconnect.mutate()} disabled={disconnect.isPending}>
              {disconnect.isPending ? "Disconnecting…" : "Disconnect"}
            </button>
          </div>
          <ErrorText error={disconnect.error} />
        </>
      )}
      {drive.state === "ready" && !drive.status.connected && (
        <>
          <p data-drive="disconnected">
            <span className="badge status-inactive">not connected</span>
          </p>
          <p className="muted small">Sluice asks only for the files you choose to share with it (drive.file access).</p>
          {waiting ? (
            <div className="actions">
              <Loading label={waiting === "desktop" ? "Finish connecting in your browser…" : "Finish connecting in the Google window…"} />
              <button type="button" onClick={cancel}>
                Cancel
              </button>
            </div>
          ) : (
            <div className="actions">
              <button type="button" className="primary" onClick={() => void connect()}>
                Connect Google Drive
              </button>
            </div>
          )}
        </>
      )}
      <ErrorText error={error} />
    </section>
  );
}

function scopeLabel(scope: string): string {
  const short = scope.replace(/^https:\/\/www\.googleapis\.com\/auth\//, "");
  return short === "drive.file" ? "files you pick (drive.file)" : short;
}

/** A drive source for a group; only offered once Drive is connected. */
export function AddDriveSourceForm({ groups, onCreated }: { groups: api.Group[]; onCreated: (created: api.CreatedDriveSource) => void }) {
  const [chosenGroup, setGroup] = useState("");
  const group = ownerGroup(chosenGroup, groups);
  const [name, setName] = useState("");
  const [problem, setProblem] = useState<string | null>(null);
  const create = useMutation({
    mutationFn: () => api.answer(client.POST("/data_sources/drive", { body: { data_source: { data_source_name: name.trim(), owner_group_id: group } } })),
    onSuccess: (created) => {
      setName("");
      onCreated(created);
      return invalidateSourceLists();
    },
  });
  if (groups.length === 0) return null;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const trimmed = name.trim();
    const p = !trimmed ? "Give the source a name." : trimmed.length > SOURCE_NAME_MAX ? `Use at most ${SOURCE_NAME_MAX} characters.` : !group ? "Choose the group that will own this source." : null;
    setProblem(p);
    if (!p) create.mutate();
  };
  return (
    <form onSubmit={submit} aria-label="Add drive source" noValidate className="drive-form">
      <h3>Add a drive source</h3>
      <div className="form-grid">
        <div className="field">
          <label htmlFor="drive-group">Owner group</label>
          <select id="drive-group" value={group} onChange={(e) => setGroup(e.target.value)}>
            {groups.map((g) => (
              <option key={g.id} value={g.id}>
                {g.group_name}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor="drive-name">Drive source name</label>
          <input
            id="drive-name"
            value={name}
            onChange={(e) => setName(e.target.value)}
            placeholder="Team drive files"
            aria-invalid={problem ? true : undefined}
            aria-describedby={problem ? "drive-name-note" : undefined}
          />
          {problem && (
            <p className="field-error" id="drive-name-note">
              {problem}
            </p>
          )}
        </div>
      </div>
      <div className="form-actions">
        <button type="submit" className="primary" disabled={create.isPending}>
          Add drive source
        </button>
      </div>
      <ErrorText error={create.error} />
    </form>
  );
}

/** Splits what was pasted (ids, commas, whitespace, or Drive links) into file ids. */
function parseFileIds(text: string): string[] {
  return text
    .split(/[\s,;]+/)
    .map((part) => /\/d\/([A-Za-z0-9_-]+)/.exec(part)?.[1] ?? /[?&]id=([A-Za-z0-9_-]+)/.exec(part)?.[1] ?? part)
    .filter(Boolean);
}

/** Per drive source: add files by id (422 per field shown), ingest everything granted (409 shown), picker access. */
export function DriveSourceTools({ source }: { source: api.DataSource }) {
  const [ids, setIds] = useState("");
  const [result, setResult] = useState<string | null>(null);
  const [picker, setPicker] = useState<string | null>(null);
  const list = parseFileIds(ids);
  const describe = (r: api.DriveFilesResult) =>
    `${r.added} new file${r.added === 1 ? "" : "s"} registered (${r.files.length} in total)${r.files.length ? `: ${r.files.map((f) => f.name).join(", ")}` : ""}. Run the pipeline to index them.`;
  const path = { id: source.id };
  const add = useMutation({
    mutationFn: () => api.answer(client.POST("/data_sources/drive/{id}/files", { params: { path }, body: { file_ids: list } })),
    onMutate: () => {
      setResult(null);
      ingestAll.reset();
    },
    onSuccess: (r) => {
      setIds("");
      setResult(describe(r));
    },
  });
  const ingestAll = useMutation({
    mutationFn: () => api.answer(client.POST("/data_sources/drive/{id}/ingest_all", { params: { path } })),
    onMutate: () => {
      setResult(null);
      add.reset();
    },
    onSuccess: (r) => setResult(describe(r)),
  });
  const checkPicker = useMutation({
    mutationFn: () => api.answer(client.GET("/data_sources/drive/picker_token")),
    onMutate: () => setPicker(null),
    onSuccess: (token) => setPicker(`Picker access is ready (token valid until ${formatTime(token.expires_at)}).`),
  });
  // Field errors name file_ids.N: show which id each one is about.
  const addError =
    add.error instanceof api.ApiError && add.error.errors.length
      ? add.error.errors.map((e) => {
          const index = /^file_ids\.(\d+)$/.exec(e.field)?.[1];
          return index !== undefined && list[Number(index)] ? `${list[Number(index)]}: ${e.message}` : `${e.field} ${e.message}`;
        })
      : null;
  return (
    <div className="drive-tools">
      <form
        className="inline-form"
        aria-label={`Add files to ${source.data_source_name}`}
        onSubmit={(e) => {
          e.preventDefault();
          if (list.length) add.mutate();
        }}
      >
        <label htmlFor={`drive-ids-${source.id}`} className="small">
          Drive file ids
        </label>
        <input
          id={`drive-ids-${source.id}`}
          className="grow"
          value={ids}
          onChange={(e) => setIds(e.target.value)}
          placeholder="ids or links, separated by spaces or commas"
          spellCheck={false}
          autoComplete="off"
          aria-invalid={add.error ? true : undefined}
        />
        <button type="submit" disabled={add.isPending || list.length === 0}>
          Add files by id
        </button>
      </form>
      {addError ? (
        <div className="error" role="alert">
          Google Drive refused {addError.length === 1 ? "this id" : "these ids"}:
          <ul>
            {addError.map((line) => (
              <li key={line}>{line}</li>
            ))}
          </ul>
        </div>
      ) : (
        <ErrorText error={add.error} />
      )}
      <div className="actions">
        <button type="button" onClick={() => ingestAll.mutate()} disabled={ingestAll.isPending}>
          {ingestAll.isPending ? "Listing Drive…" : "Ingest everything I granted"}
        </button>
        <button type="button" onClick={() => checkPicker.mutate()} disabled={checkPicker.isPending}>
          Check picker access
        </button>
      </div>
      <ErrorText error={ingestAll.error} />
      <ErrorText error={checkPicker.error} />
      {picker && <p className="muted small">{picker} The Google Picker uses this short-lived token; until it is set up here, add files by id.</p>}
      {result && (
        <p className="notice" role="status">
          {result}
        </p>
      )}
    </div>
  );
}
