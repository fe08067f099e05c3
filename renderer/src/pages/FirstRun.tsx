import { useMutation, useQuery } from "@tanstack/react-query";
import { useId, useState, type FormEvent, type ReactNode } from "react";
import { useNavigate } from "react-router";
import * as api from "../api";
import { client, invalidate, keys, queries } from "../api";
import { ErrorText, announce } from "../components";
import { GROUP_NAME_RULE, SMB_PORT, SMB_SERVER_NAME, groupNameProblem } from "../names";

type Kind = "folder" | "smb";
type Fields = { group: string; name: string; path: string; server: string; ip: string; port: string; user: string; password: string };
type Problems = Partial<Record<keyof Fields, string>>;

/**
 * Whether to offer the guided first run: to the instance's administrator, before they are in any
 * group or have any collection (a new instance's first account). Everyone else sees the pages as they are.
 */
export function useFirstRun(): boolean {
  const me = useQuery(queries.me());
  const groups = useQuery(queries.groups());
  const collections = useQuery(queries.collections());
  return me.data?.is_admin === true && !!groups.data && !groups.data.some((g) => g.is_member) && collections.data?.length === 0;
}

function Field({ id, label, problem, hint, children }: { id: string; label: string; problem?: string; hint?: string; children: (p: Record<string, unknown>) => ReactNode }) {
  const note = problem || hint ? `${id}-note` : undefined;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children({ id, "aria-invalid": problem ? true : undefined, "aria-describedby": note })}
      {problem ? (
        <p className="field-error" id={note} role="alert">
          {problem}
        </p>
      ) : hint ? (
        <p className="hint" id={note}>
          {hint}
        </p>
      ) : null}
    </div>
  );
}

function check(kind: Kind, f: Fields): Problems {
  const problems: Problems = {};
  const group = groupNameProblem(f.group);
  if (group) problems.group = group;
  if (!f.name.trim()) problems.name = "Give the source a name.";
  if (kind === "folder" && !f.path.trim()) problems.path = "Enter the folder's full path on the Sluice machine.";
  if (kind === "smb") {
    if (!SMB_SERVER_NAME.test(f.server)) problems.server = "Enter the file server's host name: letters, digits, dots and hyphens.";
    const port = Number(f.port);
    if (!/^\d+$/.test(f.port) || port < SMB_PORT.minimum || port > SMB_PORT.maximum) problems.port = `Port is a number from ${SMB_PORT.minimum} to ${SMB_PORT.maximum}.`;
    if (!f.user) problems.user = "Enter the user name for the share.";
  }
  return problems;
}

/** Which field a failed step concerns, so its message sits under that field. */
function placeFailure(step: "group" | "source" | "run", kind: Kind, error: unknown): { field: keyof Fields | null; text: string } {
  const text = api.errorMessage(error);
  if (step === "group") return { field: "group", text };
  if (step !== "source" || !(error instanceof api.ApiError)) return { field: null, text };
  // The API names its field ("folder_source.path ..."); under the field itself, "The folder" says it.
  if (kind === "folder") return { field: error.status === 400 ? "path" : null, text: text.replace(/^folder_source\.path /, "The folder ") };
  const byReason: Record<string, keyof Fields> = { logon_failure: "password", host_not_found: "server", connection_refused: "port", timed_out: "server" };
  const field = error.reason ? (byReason[error.reason] ?? null) : null;
  return { field, text: error.hint ? `${error.detail}: ${error.hint}` : text };
}

/**
 * "Add your first source" (issue 34 item 10): the group, the source (which brings its collection
 * and pipeline) and the first run, in one form; what is not set up is said once, to whoever can change it.
 */
export function FirstRun() {
  const navigate = useNavigate();
  const folder = useQuery(queries.folderStatus());
  const instance = useQuery(queries.instance());
  const folderOn = folder.data?.enabled === true;
  const [chosen, setKind] = useState<Kind>("folder");
  const kind: Kind = folderOn ? chosen : "smb";
  const [f, setF] = useState<Fields>({ group: "my-team", name: "Documents", path: "", server: "", ip: "", port: "445", user: "", password: "" });
  const [submitted, setSubmitted] = useState(false);
  // A group made by an earlier try is used again, so a corrected source does not need a new group name.
  const [made, setMade] = useState<{ name: string; id: string } | null>(null);
  const [failure, setFailure] = useState<{ field: keyof Fields | null; text: string } | null>(null);
  const kindName = useId();

  const run = useMutation({
    mutationFn: async () => {
      let step: "group" | "source" | "run" = "group";
      try {
        const groupId =
          made && made.name === f.group
            ? made.id
            : (await api.answer(client.POST("/user_groups", { body: { group_name: f.group, group_permission: "write" } }))).created_group_id;
        setMade({ name: f.group, id: groupId });
        step = "source";
        const created =
          kind === "folder"
            ? await api.answer(
                client.POST("/data_sources/folder/{group_id}", {
                  params: { path: { group_id: groupId } },
                  body: { data_source: { data_source_name: f.name.trim() }, folder_source: { path: f.path.trim() } },
                }),
              )
            : await api.answer(
                client.POST("/data_sources/smb/{group_id}", {
                  params: { path: { group_id: groupId } },
                  body: {
                    data_source: { data_source_name: f.name.trim() },
                    smb_source: {
                      remote_system_username: f.user,
                      remote_smb_password: f.password,
                      remote_system_name: f.server,
                      local_system_name: "",
                      default_ip: f.ip || null,
                      port: Number(f.port),
                    },
                  },
                }),
              );
        step = "run";
        await api.answer(client.POST("/data_pipelines/{id}/ingest", { params: { path: { id: created.pipeline.id } } }));
        return created.pipeline.id;
      } catch (error) {
        setFailure(placeFailure(step, kind, error));
        throw error;
      }
    },
    onSuccess: async (pipelineId) => {
      announce("Source added. Its first run has started.");
      await invalidate(keys.groups, keys.sources, keys.collections, keys.pipelines);
      await navigate(`/pipelines/${pipelineId}`);
    },
  });

  const problems: Problems = submitted ? check(kind, f) : {};
  if (failure?.field && !problems[failure.field]) problems[failure.field] = failure.text;
  const set = (key: keyof Fields) => (e: { target: { value: string } }) => setF((prev) => ({ ...prev, [key]: e.target.value }));
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setSubmitted(true);
    setFailure(null);
    if (Object.keys(check(kind, f)).length === 0) run.mutate();
  };
  const atTheMachine = instance.data?.can_change_settings === true;
  const folderOff = folder.data && !folder.data.enabled;
  return (
    <form className="card first-run" onSubmit={submit} aria-labelledby="first-run-heading" noValidate>
      <h2 id="first-run-heading">Add your first source</h2>
      <p className="muted">
        Sluice reads documents from a source into a collection, which belongs to a group of people. This makes your group, adds the source with its collection, and starts
        reading it.
      </p>
      {folderOff && (
        <p className="note" id="first-run-not-set-up">
          {atTheMachine
            ? "Folders on this computer are off. To read them, set FOLDER_SOURCE_ROOTS to the folders Sluice may read and restart Sluice; until then, add a shared folder on the network."
            : "Folders on the server's machine are off: whoever runs the Sluice server can turn them on with FOLDER_SOURCE_ROOTS. Until then, add a shared folder on the network."}
        </p>
      )}
      <div className="form-grid">
        <Field id="first-group" label="Your group" problem={problems.group} hint={`Use ${GROUP_NAME_RULE}. You can invite others into it later.`}>
          {(p) => <input {...p} value={f.group} onChange={set("group")} spellCheck={false} />}
        </Field>
        {folderOn && (
          <fieldset>
            <legend>What to read</legend>
            <label>
              <input type="radio" name={kindName} value="folder" checked={kind === "folder"} onChange={() => setKind("folder")} /> A folder on this computer
            </label>
            <label>
              <input type="radio" name={kindName} value="smb" checked={kind === "smb"} onChange={() => setKind("smb")} /> A shared folder on the network (SMB)
            </label>
          </fieldset>
        )}
        <Field id="first-name" label="Source name" problem={problems.name}>
          {(p) => <input {...p} value={f.name} onChange={set("name")} />}
        </Field>
        {kind === "folder" ? (
          <Field id="first-path" label="Folder path" problem={problems.path} hint={`The full path, inside ${(folder.data?.roots ?? []).join(" or ")}.`}>
            {(p) => <input {...p} value={f.path} onChange={set("path")} placeholder={folder.data?.roots[0] ?? ""} autoComplete="off" spellCheck={false} />}
          </Field>
        ) : (
          <>
            <Field id="first-server" label="Server name" problem={problems.server} hint="Host name of the file server, e.g. fileserver01">
              {(p) => <input {...p} value={f.server} onChange={set("server")} autoComplete="off" spellCheck={false} />}
            </Field>
            <Field id="first-ip" label="IP address (optional)" problem={problems.ip}>
              {(p) => <input {...p} value={f.ip} onChange={set("ip")} inputMode="decimal" spellCheck={false} />}
            </Field>
            <Field id="first-port" label="Port" problem={problems.port}>
              {(p) => <input {...p} value={f.port} onChange={set("port")} inputMode="numeric" />}
            </Field>
            <Field id="first-user" label="User name" problem={problems.user} hint="As you sign in to Windows: DOMAIN\user, user@domain, or just user">
              {(p) => <input {...p} value={f.user} onChange={set("user")} autoComplete="off" spellCheck={false} />}
            </Field>
            <Field id="first-password" label="Password" problem={problems.password}>
              {(p) => <input {...p} type="password" value={f.password} onChange={set("password")} autoComplete="new-password" />}
            </Field>
          </>
        )}
      </div>
      <div className="form-actions">
        <button type="submit" className="primary" disabled={run.isPending}>
          {run.isPending ? "Setting up…" : "Add source and start reading"}
        </button>
      </div>
      {failure && !failure.field && <ErrorText error={failure.text} />}
    </form>
  );
}
