import { useMutation, useQuery } from "@tanstack/react-query";
import { useRef, useState, type FormEvent } from "react";
import * as api from "../api";
import { client, invalidate, keys, queries } from "../api";
import { ConfirmButton, Empty, ErrorText, Field, Loading, announce, usePageHeading } from "../components";
import { formatTime } from "../format";
import { href } from "../navigation";

/** A file server as account links name it (the server's normaliseServer): one choice per server, whichever source leads to it. */
function serverKey(name: string): string {
  return name.trim().toLowerCase();
}

/** One choice per file server among the caller's SMB sources; a permission source is the one posted when there is one. */
function fileServers(sources: api.DataSource[]): Array<{ server: string; sourceId: string; sourceNames: string[] }> {
  const byServer = new Map<string, { server: string; sourceId: string; sourceNames: string[]; permissions: boolean }>();
  for (const source of sources) {
    const smb = source.smb_source;
    if (source.kind !== "smb" || !smb) continue;
    const server = serverKey(smb.remote_system_name);
    const held = byServer.get(server);
    if (!held) byServer.set(server, { server, sourceId: source.id, sourceNames: [source.data_source_name], permissions: smb.source_permissions });
    else {
      held.sourceNames.push(source.data_source_name);
      if (smb.source_permissions && !held.permissions) Object.assign(held, { sourceId: source.id, permissions: true });
    }
  }
  return [...byServer.values()].sort((a, b) => a.server.localeCompare(b.server));
}

type LinkField = "server" | "username" | "password";

/** Which field an answer's error belongs under: a refused login under the password, a taken or locked account under the user name. */
function problemsOf(error: unknown): { field: Partial<Record<LinkField, string>>; form: string | null } {
  if (!(error instanceof api.ApiError)) return { field: {}, form: error ? api.errorMessage(error) : null };
  if (error.status === 422 && error.errors.length) {
    const field: Partial<Record<LinkField, string>> = {};
    for (const e of error.errors) {
      const name: LinkField = e.field === "username" ? "username" : e.field === "password" ? "password" : "server";
      field[name] = `${api.fieldLabel(e.field === "data_source_id" ? "server" : e.field)} ${e.message.replace(/\.$/, "")}.`;
    }
    return { field, form: null };
  }
  if (error.status === 400 && /refused/i.test(error.detail)) {
    // The SMB status is what an administrator asks for; the login's address is not news to the person typing.
    const status = /\b(STATUS_[A-Z_]+)\b/.exec(error.detail)?.[1];
    return { field: { password: `The server refused this user name or password${status ? ` (${status})` : ""}.` }, form: null };
  }
  if (error.status === 409) return { field: { username: error.detail }, form: null };
  if (error.status === 429) {
    const seconds = error.retryAfterSeconds ?? 15 * 60;
    const at = new Date(Date.now() + seconds * 1000).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
    const minutes = Math.ceil(seconds / 60);
    return {
      field: { username: `Too many failed sign-ins as this account. Try again after ${at} (in ${minutes} minute${minutes === 1 ? "" : "s"}).` },
      form: null,
    };
  }
  if (error.status === 400 || error.status === 404) return { field: { server: error.detail }, form: null };
  return { field: {}, form: api.errorMessage(error) };
}

function LinkAccountForm({ sources }: { sources: api.DataSource[] }) {
  const servers = fileServers(sources);
  const [chosen, setChosen] = useState("");
  const [username, setUsername] = useState("");
  const [missing, setMissing] = useState<Partial<Record<LinkField, string>>>({});
  // The password lives only in the input: read at submit, sent, and the input cleared once answered (no state, no mutation variables).
  const password = useRef<HTMLInputElement>(null);
  const usernameInput = useRef<HTMLInputElement>(null);
  const sourceId = servers.some((s) => s.sourceId === chosen) ? chosen : (servers[0]?.sourceId ?? "");
  const link = useMutation({
    mutationFn: () =>
      api.answer(
        client.POST("/users/me/smb_accounts", { body: { data_source_id: sourceId, username: username.trim(), password: password.current?.value ?? "" } }),
      ),
    onSettled: () => {
      if (password.current) password.current.value = "";
    },
    onSuccess: (linked) => {
      announce(`Windows account ${linked.account} linked on ${linked.server}.`);
      setUsername("");
      return invalidate(keys.smbAccounts, keys.collections);
    },
    onError: (error) => {
      const { field } = problemsOf(error);
      const first = (["server", "username", "password"] as const).find((name) => field[name]);
      if (first) announce(field[first]!);
      document.getElementById(`link-${first ?? "username"}`)?.focus();
    },
  });
  const answered = problemsOf(link.error);
  const problems = { ...answered.field, ...missing };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const absent: Partial<Record<LinkField, string>> = {};
    if (!username.trim()) absent.username = "Enter the Windows user name.";
    if (!password.current?.value) absent.password = "Enter the Windows password.";
    setMissing(absent);
    link.reset();
    if (absent.username) usernameInput.current?.focus();
    else if (absent.password) password.current?.focus();
    else link.mutate();
  };
  if (servers.length === 0)
    return (
      <div className="card">
        <h2>Link a Windows account</h2>
        <Empty>
          None of your data sources is an SMB share, so there is no file server to link an account on. <a href={href("sources")}>Data sources</a>
        </Empty>
      </div>
    );
  return (
    <form className="card" onSubmit={submit} aria-label="Link a Windows account" noValidate>
      <h2>Link a Windows account</h2>
      <p className="muted">Sluice signs in to the file server as this account once, to learn its groups. The password is not kept.</p>
      <div className="form-grid">
        <Field id="link-server" label="File server" problem={problems.server} hint="From your SMB data sources">
          {(p) => (
            <select {...p} value={sourceId} onChange={(e) => setChosen(e.target.value)}>
              {servers.map((s) => (
                <option key={s.server} value={s.sourceId}>
                  {s.server} ({s.sourceNames.join(", ")})
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field id="link-username" label="User name" problem={problems.username} hint="DOMAIN\user or user@domain">
          {(p) => <input {...p} ref={usernameInput} value={username} onChange={(e) => setUsername(e.target.value)} autoComplete="off" spellCheck={false} />}
        </Field>
        <Field id="link-password" label="Password" problem={problems.password}>
          {(p) => <input {...p} ref={password} type="password" autoComplete="off" defaultValue="" />}
        </Field>
      </div>
      <div className="form-actions">
        <button type="submit" className="primary" disabled={link.isPending}>
          {link.isPending ? "Signing in…" : "Link account"}
        </button>
      </div>
      <ErrorText error={answered.form} />
    </form>
  );
}

function LinkRow({ link }: { link: api.SmbAccountLink }) {
  const unlink = useMutation({
    mutationFn: () => client.DELETE("/users/me/smb_accounts/{id}", { params: { path: { id: link.id } } }),
    onSuccess: () => {
      announce(`Windows account ${link.account} removed.`);
      return invalidate(keys.smbAccounts, keys.collections);
    },
  });
  return (
    <li className="card link-row" aria-label={`Windows account ${link.account} on ${link.server}`}>
      <div className="row-between">
        <div>
          <strong>{link.account}</strong> <span className="muted">on {link.server}</span>
        </div>
        <ConfirmButton
          label="Remove"
          confirmLabel="Yes, remove"
          question={`Remove ${link.account}? On ${link.server} you will then see only the files everyone may read.`}
          onConfirm={() => unlink.mutate()}
          busy={unlink.isPending}
        />
      </div>
      <h3 className="small-heading">Groups</h3>
      {link.groups.length === 0 ? (
        <p className="muted">No groups on the server.</p>
      ) : (
        <ul className="chips" aria-label={`Groups of ${link.account}`}>
          {link.groups.map((g) => (
            <li key={g.sid} className="chip plain" title={g.sid}>
              {g.name || g.sid}
            </li>
          ))}
        </ul>
      )}
      <p className="muted small">Groups checked {formatTime(link.checked_at)}; they are checked again at each run of a permission source on this server.</p>
      <ErrorText error={unlink.error} />
    </li>
  );
}

/** The account menu's "Windows accounts": whose file-server permissions apply to the caller, server by server (issue 33 item 7). */
export function WindowsAccountsPage() {
  const heading = usePageHeading("Windows accounts");
  const sources = useQuery(queries.sources());
  const links = useQuery(queries.smbAccounts());
  return (
    <div className="page">
      <h1 ref={heading} tabIndex={-1}>
        Windows accounts
      </h1>
      <p className="muted">
        Collections that use a file server's permissions show you the files your Windows account there may read. Without a linked account you see only the
        files everyone may read.
      </p>
      {sources.isPending ? <Loading /> : null}
      <ErrorText error={sources.error} />
      {sources.data && <LinkAccountForm sources={sources.data} />}
      <section aria-labelledby="links-heading">
        <h2 id="links-heading">Your linked accounts</h2>
        {links.isPending ? <Loading /> : null}
        <ErrorText error={links.error} />
        {links.data?.length === 0 && <Empty>No Windows account linked yet.</Empty>}
        {links.data && links.data.length > 0 && (
          <ul className="link-list">
            {links.data.map((link) => (
              <LinkRow key={link.id} link={link} />
            ))}
          </ul>
        )}
      </section>
    </div>
  );
}
