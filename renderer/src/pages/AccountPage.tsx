import { useMutation, useQuery } from "@tanstack/react-query";
import { useRef, useState, type FormEvent } from "react";
import * as api from "../api";
import { ApiError, client, invalidate, keys, queries, queryClient } from "../api";
import { ConfirmButton, Empty, ErrorText, Loading, announce, usePageHeading } from "../components";
import { formatTime } from "../format";
import { PASSWORD_RULE } from "../names";
import { LanAccess } from "./LanAccess";
import { ServerCertificate } from "./ServerCertificate";

/** A server answer's problem with one field (a 422's field error, or the 403 of a wrong current password), else null. */
function fieldProblem(error: unknown, field: string): string | null {
  if (!(error instanceof ApiError)) return null;
  const found = error.errors.find((e) => e.field === field);
  if (found) return `${found.message.replace(/\.$/, "")}.`;
  if (field === "current_password" && error.status === 403) return error.detail;
  return null;
}

/** The one field error of a form, under its field (aria-describedby), or its hint. */
function FieldNote({ id, problem, hint }: { id: string; problem: string | null; hint?: string }) {
  if (problem) {
    return (
      <p className="field-error" id={id} role="alert">
        {problem}
      </p>
    );
  }
  return hint ? (
    <p className="hint" id={id}>
      {hint}
    </p>
  ) : null;
}

function ApiKeys() {
  const list = useQuery(queries.apiKeys());
  const [name, setName] = useState("");
  const [shown, setShown] = useState<api.CreatedApiKey | null>(null);
  const keyField = useRef<HTMLInputElement>(null);
  const create = useMutation({
    mutationFn: () => api.answer(client.POST("/users/me/api_keys", { body: { name: name.trim() } })),
    onSuccess: async (made) => {
      setShown(made);
      setName("");
      announce(`API key ${made.name} made. Copy it now: it is shown only once.`);
      await invalidate(keys.apiKeys);
      setTimeout(() => keyField.current?.select(), 0);
    },
  });
  const revoke = useMutation({
    mutationFn: (key: api.ApiKey) => api.answer(client.DELETE("/users/me/api_keys/{id}", { params: { path: { id: key.id } } })).then(() => key),
    onSuccess: async (key) => {
      if (shown?.id === key.id) setShown(null);
      announce(`API key ${key.name} revoked.`);
      await invalidate(keys.apiKeys);
    },
  });
  const nameProblem = fieldProblem(create.error, "name");
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (name.trim()) create.mutate();
  };
  return (
    <section className="card" aria-labelledby="api-keys-heading">
      <h2 id="api-keys-heading">API keys</h2>
      <p className="muted">A key lets a script use Sluice as you: send it as <code>Authorization: Bearer KEY</code>. Anyone with the key has your access, until you revoke it.</p>
      <form onSubmit={submit} noValidate aria-label="Make an API key">
        <div className="field">
          <label htmlFor="api-key-name">What the key is for</label>
          <input
            id="api-key-name"
            value={name}
            maxLength={100}
            onChange={(e) => setName(e.target.value)}
            aria-invalid={nameProblem ? true : undefined}
            aria-describedby="api-key-name-note"
          />
          <FieldNote id="api-key-name-note" problem={nameProblem} hint="For example: nightly backup script." />
        </div>
        {!nameProblem && <ErrorText error={create.error} />}
        <button type="submit" className="primary" disabled={create.isPending || !name.trim()}>
          Make a key
        </button>
      </form>
      {shown && (
        <section className="notice" aria-label="New API key">
          <label htmlFor="api-key-value">Your new key “{shown.name}”. Copy it now: it will not be shown again.</label>
          <input id="api-key-value" ref={keyField} readOnly value={shown.key} onFocus={(e) => e.target.select()} />
          <button type="button" onClick={() => setShown(null)}>
            I have copied it
          </button>
        </section>
      )}
      {list.isPending ? <Loading /> : null}
      <ErrorText error={list.error} />
      {list.data && list.data.length === 0 && <Empty>No API keys.</Empty>}
      {list.data && list.data.length > 0 && (
        <ul className="plain compact" aria-label="Your API keys">
          {list.data.map((key) => (
            <li key={key.id} className="row">
              <span>
                <strong>{key.name}</strong>{" "}
                <span className="muted">
                  made {formatTime(key.created_at)}; {key.last_used_at ? `last used ${formatTime(key.last_used_at)}` : "never used"}
                </span>
              </span>
              <ConfirmButton
                label={`Revoke ${key.name}`}
                confirmLabel="Yes, revoke"
                question={`Revoke the API key “${key.name}”? Scripts using it stop working at once.`}
                onConfirm={() => revoke.mutate(key)}
                busy={revoke.isPending}
              />
            </li>
          ))}
        </ul>
      )}
      <ErrorText error={revoke.error} />
    </section>
  );
}

function ChangePassword() {
  const [current, setCurrent] = useState("");
  const [next, setNext] = useState("");
  const [localProblem, setLocalProblem] = useState<string | null>(null);
  const change = useMutation({
    mutationFn: () => api.answer(client.PUT("/users/me/password", { body: { current_password: current, new_password: next } })),
    onSuccess: () => {
      setCurrent("");
      setNext("");
      announce("Password changed. Every other session is signed out.");
    },
  });
  const currentProblem = fieldProblem(change.error, "current_password");
  const newProblem = localProblem ?? fieldProblem(change.error, "new_password");
  const other = change.error && !currentProblem && !newProblem ? change.error : null;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const tooShort = next.length < PASSWORD_RULE.minLength || !/\p{L}/u.test(next) || !/\p{Nd}/u.test(next);
    setLocalProblem(tooShort ? `Use ${PASSWORD_RULE.minLength} to ${PASSWORD_RULE.maxLength} characters, with at least one letter and one digit.` : null);
    change.reset();
    if (!tooShort) change.mutate();
  };
  return (
    <form className="card" onSubmit={submit} noValidate aria-labelledby="password-heading">
      <h2 id="password-heading">Change password</h2>
      <p className="muted">Every other session (other browsers and devices) is signed out; this one stays. API keys keep working.</p>
      <div className="field">
        <label htmlFor="current-password">Current password</label>
        <input
          id="current-password"
          type="password"
          autoComplete="current-password"
          value={current}
          onChange={(e) => setCurrent(e.target.value)}
          aria-invalid={currentProblem ? true : undefined}
          aria-describedby={currentProblem ? "current-password-note" : undefined}
        />
        <FieldNote id="current-password-note" problem={currentProblem} />
      </div>
      <div className="field">
        <label htmlFor="new-password">New password</label>
        <input
          id="new-password"
          type="password"
          autoComplete="new-password"
          value={next}
          onChange={(e) => setNext(e.target.value)}
          aria-invalid={newProblem ? true : undefined}
          aria-describedby="new-password-note"
        />
        <FieldNote
          id="new-password-note"
          problem={newProblem}
          hint={`${PASSWORD_RULE.minLength} to ${PASSWORD_RULE.maxLength} characters, with at least one letter and one digit.`}
        />
      </div>
      <ErrorText error={other} />
      {change.isSuccess && <p role="status">Password changed. Every other session is signed out.</p>}
      <button type="submit" className="primary" disabled={change.isPending || !current || !next}>
        Change password
      </button>
    </form>
  );
}

/** Signed out (everywhere, or the account is gone): the sign-in screen replaces everything. */
const toSignIn = () => queryClient.setQueryData(keys.me, null);

function Sessions() {
  const everywhere = useMutation({
    mutationFn: () => api.answer(client.POST("/signout", { params: { query: { everywhere: "true" } } })),
    onSuccess: toSignIn,
  });
  return (
    <section className="card" aria-labelledby="sessions-heading">
      <h2 id="sessions-heading">Sign out everywhere</h2>
      <p className="muted">Ends every session of your account, on every browser and device, this one included. API keys keep working.</p>
      <ConfirmButton
        label="Sign out everywhere"
        confirmLabel="Yes, sign out everywhere"
        question="Sign out of Sluice on every browser and device, this one included?"
        onConfirm={() => everywhere.mutate()}
        busy={everywhere.isPending}
      />
      <ErrorText error={everywhere.error} />
    </section>
  );
}

function DeleteAccount({ email }: { email: string }) {
  const remove = useMutation({
    mutationFn: () => api.answer(client.DELETE("/users/me")),
    onSuccess: toSignIn,
  });
  return (
    <section className="card" aria-labelledby="delete-heading">
      <h2 id="delete-heading">Delete account</h2>
      <p className="muted">
        Your conversations, personal models, API keys and Google Drive link are deleted. Your groups stay with their other members; a group only you are in
        is deleted when it owns nothing.
      </p>
      <ConfirmButton
        label="Delete my account"
        confirmLabel="Yes, delete my account"
        question={`Delete the account ${email}? This cannot be undone.`}
        onConfirm={() => remove.mutate()}
        busy={remove.isPending}
      />
      <ErrorText error={remove.error} />
    </section>
  );
}

export function AccountPage() {
  const heading = usePageHeading("Account");
  const me = useQuery(queries.me()).data;
  return (
    <div className="page">
      <h1 ref={heading} tabIndex={-1}>
        Account
      </h1>
      <p className="muted">Signed in as {me?.email}.</p>
      <div className="two-col">
        <div>
          <ApiKeys />
          <LanAccess />
          <ServerCertificate />
        </div>
        <div>
          <ChangePassword />
          <Sessions />
          {me && <DeleteAccount email={me.email} />}
        </div>
      </div>
    </div>
  );
}
