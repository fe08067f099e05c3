import { useMutation, useQuery } from "@tanstack/react-query";
import { useEffect, useRef, useState, type FormEvent } from "react";
import * as api from "../api";
import { client, invalidate, keys, queries } from "../api";
import { ConfirmButton, Empty, ErrorText, Loading, announce, usePageHeading } from "../components";
import { GROUP_NAME_RULE, groupNameProblem } from "../names";
import { InvitationLink } from "./InvitationLink";

/** What a group's permission means, said where it is chosen (the spec: stored and shown; access follows membership). */
const PERMISSION_HELP =
  "A label kept with the group and shown next to its name: read, write or none. It does not change access: every member can use and change what the group owns, and no one else can see it.";

function Tree({ nodes }: { nodes: api.GroupTreeNode[] }) {
  return (
    <ul className="tree">
      {nodes.map((node) => (
        <li key={node.id}>
          <span className="tree-node">
            {node.group_name} <span className={`badge perm-${node.group_permission}`}>{node.group_permission}</span>
          </span>
          {node.children.length > 0 && <Tree nodes={node.children} />}
        </li>
      ))}
    </ul>
  );
}

function CreateGroupForm({ onCreated }: { onCreated: (id: string) => void }) {
  const [name, setName] = useState("");
  const [permission, setPermission] = useState<api.GroupPermission>("write");
  const [touched, setTouched] = useState(false);
  const create = useMutation({
    mutationFn: () => api.answer(client.POST("/user_groups", { body: { group_name: name, group_permission: permission } })),
    onSuccess: async ({ created_group_id }) => {
      announce(`Group ${name} created.`);
      setName("");
      setTouched(false);
      onCreated(created_group_id);
      await invalidate(keys.groups);
    },
  });
  const problem = groupNameProblem(name);
  const showProblem = touched && name !== "" && problem;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setTouched(true);
    if (!problem) create.mutate();
  };
  return (
    <form className="card form-grid" onSubmit={submit} aria-label="Create group" noValidate>
      <h2>Create a group</h2>
      <div className="field">
        <label htmlFor="group-name">Group name</label>
        <input
          id="group-name"
          value={name}
          onChange={(e) => {
            setName(e.target.value);
            setTouched(true);
          }}
          aria-invalid={showProblem ? true : undefined}
          aria-describedby="group-name-hint"
        />
        <p className={showProblem ? "field-error" : "hint"} id="group-name-hint">
          {showProblem || `Use ${GROUP_NAME_RULE}.`}
        </p>
      </div>
      <div className="field">
        <label htmlFor="group-permission">Permission</label>
        <select
          id="group-permission"
          value={permission}
          aria-describedby="group-permission-help"
          onChange={(e) => setPermission(e.target.value as api.GroupPermission)}
        >
          <option value="read">read</option>
          <option value="write">write</option>
          <option value="none">none</option>
        </select>
        <p className="hint" id="group-permission-help">
          {PERMISSION_HELP}
        </p>
      </div>
      <div className="form-actions">
        <button type="submit" className="primary" disabled={create.isPending || name === ""}>
          {create.isPending ? "Creating…" : "Create group"}
        </button>
      </div>
      <ErrorText error={create.error} />
    </form>
  );
}

function GroupCard({
  group,
  groups,
  isNew,
}: {
  group: api.Group;
  groups: api.Group[];
  /** Just created: its heading takes focus. */
  isNew: boolean;
}) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    if (isNew) heading.current?.focus();
  }, [isNew]);
  const [email, setEmail] = useState("");
  const [parent, setParentValue] = useState(group.parent_group_id ?? "");
  const [invited, setInvited] = useState<api.IssuedInvitation | null>(null);
  const path = { id: group.id };
  const add = useMutation({
    mutationFn: () => client.PUT("/user_groups/{id}/members/{email}", { params: { path: { ...path, email: email.trim() } } }),
    // 202: nobody has that address yet, and the answer is an invitation into the group.
    onSuccess: ({ data, response }) => {
      setInvited(response.status === 202 && data ? data : null);
      setEmail("");
      return invalidate(keys.groups);
    },
  });
  const remove = useMutation({
    mutationFn: (member: string) => client.DELETE("/user_groups/{id}/members/{email}", { params: { path: { ...path, email: member } } }),
    onSuccess: () => invalidate(keys.groups),
  });
  const reparent = useMutation({
    mutationFn: () => client.PUT("/user_groups/{id}/parent", { params: { path }, body: { parent_group_id: parent || null } }),
    onSuccess: () => invalidate(keys.groups),
  });
  const del = useMutation({
    mutationFn: () => client.DELETE("/user_groups/{id}", { params: { path } }),
    onSuccess: () => {
      announce(`Group ${group.group_name} deleted.`);
      return invalidate(keys.groups);
    },
  });
  const label = `group ${group.group_name}`;
  return (
    <li className="card group-card" aria-label={label}>
      <div className="row-between">
        <h3 ref={heading} tabIndex={-1}>
          {group.group_name} <span className={`badge perm-${group.group_permission}`}>{group.group_permission}</span>
        </h3>
        {group.is_member && <ConfirmButton label="Delete group" question={`Delete ${group.group_name}?`} onConfirm={() => del.mutate()} busy={del.isPending} />}
      </div>
      <ErrorText error={del.error} />
      {!group.is_member ? (
        <p className="muted">You are not a member of this group.</p>
      ) : (
        <>
          <h4>Members</h4>
          <ul className="chips">
            {(group.member_emails ?? []).map((member) => (
              <li key={member} className="chip">
                {member}
                <button type="button" className="chip-remove" aria-label={`Remove ${member} from ${group.group_name}`} onClick={() => remove.mutate(member)}>
                  ×
                </button>
              </li>
            ))}
          </ul>
          <ErrorText error={remove.error} />
          <form
            className="inline-form"
            onSubmit={(e) => {
              e.preventDefault();
              if (email.trim()) add.mutate();
            }}
          >
            <label htmlFor={`add-member-${group.id}`} className="sr-only">
              Email of the member to add to {group.group_name}
            </label>
            <input id={`add-member-${group.id}`} type="email" placeholder="colleague@example.com" value={email} onChange={(e) => setEmail(e.target.value)} />
            <button type="submit" disabled={add.isPending || !email.trim()}>
              Add member
            </button>
          </form>
          <ErrorText error={add.error} />
          {invited && <InvitationLink invitation={invited} groupName={group.group_name} />}
          <form
            className="inline-form"
            onSubmit={(e) => {
              e.preventDefault();
              reparent.mutate();
            }}
          >
            <label htmlFor={`parent-${group.id}`}>Parent group</label>
            <select id={`parent-${group.id}`} value={parent} onChange={(e) => setParentValue(e.target.value)}>
              <option value="">(none — top level)</option>
              {groups
                .filter((g) => g.id !== group.id)
                .map((g) => (
                  <option key={g.id} value={g.id}>
                    {g.group_name}
                  </option>
                ))}
            </select>
            <button type="submit" disabled={reparent.isPending || parent === (group.parent_group_id ?? "")}>
              Set parent
            </button>
          </form>
          <ErrorText error={reparent.error} />
        </>
      )}
    </li>
  );
}

export function GroupsPage() {
  const heading = usePageHeading("Groups");
  const me = useQuery(queries.me()).data;
  const groups = useQuery(queries.groups());
  const tree = useQuery(queries.groupTree());
  const [created, setCreated] = useState<string | null>(null);
  const mine = (groups.data ?? []).filter((g) => g.is_member);
  const others = (groups.data ?? []).filter((g) => !g.is_member);
  return (
    <div className="page">
      <h1 ref={heading} tabIndex={-1}>
        Groups
      </h1>
      <p className="muted">Collections and data sources belong to a group; only its members ({me?.email} and colleagues) can use them.</p>
      <div className="two-col">
        <div>
          <CreateGroupForm onCreated={setCreated} />
          <section className="card" aria-labelledby="tree-heading">
            <h2 id="tree-heading">Group tree</h2>
            {tree.isPending ? <Loading /> : null}
            <ErrorText error={tree.error} />
            {tree.data && (tree.data.length === 0 ? <Empty>No groups yet.</Empty> : <Tree nodes={tree.data} />)}
          </section>
        </div>
        <section aria-labelledby="my-groups-heading">
          <h2 id="my-groups-heading">Your groups</h2>
          {groups.isPending ? <Loading /> : null}
          <ErrorText error={groups.error} />
          {groups.data && mine.length === 0 && <Empty>You are not in any group yet. Create one to start.</Empty>}
          <ul className="plain">
            {mine.map((g) => (
              <GroupCard key={g.id} group={g} groups={groups.data ?? []} isNew={g.id === created} />
            ))}
          </ul>
          {others.length > 0 && (
            <>
              <h2>Other groups</h2>
              <ul className="plain compact">
                {others.map((g) => (
                  <li key={g.id} className="row">
                    {g.group_name} <span className={`badge perm-${g.group_permission}`}>{g.group_permission}</span>
                  </li>
                ))}
              </ul>
            </>
          )}
        </section>
      </div>
    </div>
  );
}
