import { useMutation, useQuery } from "@tanstack/react-query";
import { useId, useState, type FormEvent } from "react";
import { useNavigate } from "react-router";
import * as api from "../api";
import { client, invalidate, keys, queries } from "../api";
import { ErrorText, Field, announce } from "../components";
import { GROUP_NAME_RULE, groupNameProblem } from "../names";
import { NEW_SMB_VALUES, SmbFields, smbFailureField, smbProblems, smbSourceBody, type SmbValues } from "./SmbFields";

type Kind = "folder" | "smb";
type Fields = SmbValues & { group: string; name: string; path: string };
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

function check(kind: Kind, f: Fields): Problems {
  const problems: Problems = kind === "smb" ? smbProblems(f) : {};
  const group = groupNameProblem(f.group);
  if (group) problems.group = group;
  if (!f.name.trim()) problems.name = "Give the source a name.";
  if (kind === "folder" && !f.path.trim()) problems.path = "Enter the folder's full path on the Sluice machine.";
  return problems;
}

/** Which field a failed step concerns, so its message sits under that field. */
function placeFailure(step: "group" | "source" | "run", kind: Kind, f: Fields, error: unknown): { field: keyof Fields | null; text: string } {
  const text = api.errorMessage(error);
  if (step === "group") return { field: "group", text };
  if (step !== "source" || !(error instanceof api.ApiError)) return { field: null, text };
  // The API names its field ("folder_source.path ..."); under the field itself, "The folder" says it.
  if (kind === "folder") return { field: error.status === 400 ? "path" : null, text: text.replace(/^folder_source\.path /, "The folder ") };
  const field = error.reason ? smbFailureField(error.reason, f) : null;
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
  const [f, setF] = useState<Fields>({ group: "my-team", name: "Documents", path: "", ...NEW_SMB_VALUES });
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
                    smb_source: smbSourceBody(f),
                  },
                }),
              );
        step = "run";
        await api.answer(client.POST("/data_pipelines/{id}/ingest", { params: { path: { id: created.pipeline.id } } }));
        return created.pipeline.id;
      } catch (error) {
        setFailure(placeFailure(step, kind, f, error));
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
        <Field id="first-group" label="Your group" problem={problems.group} alert hint={`Use ${GROUP_NAME_RULE}. You can invite others into it later.`}>
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
        <Field id="first-name" label="Source name" problem={problems.name} alert>
          {(p) => <input {...p} value={f.name} onChange={set("name")} />}
        </Field>
        {kind === "folder" ? (
          <Field id="first-path" label="Folder path" problem={problems.path} alert hint={`The full path, inside ${(folder.data?.roots ?? []).join(" or ")}.`}>
            {(p) => <input {...p} value={f.path} onChange={set("path")} placeholder={folder.data?.roots[0] ?? ""} autoComplete="off" spellCheck={false} />}
          </Field>
        ) : (
          <SmbFields idPrefix="first" values={f} problems={problems} onChange={(key, value) => setF((prev) => ({ ...prev, [key]: value }))} workstation={false} alert />
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
