import { useMutation, useQuery } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import * as api from "../api";
import { client, invalidate, keys, queries } from "../api";
import { ConfirmButton, Empty, ErrorText, Loading, announce, usePageHeading } from "../components";
import { formatTime } from "../format";
import { InvitationLink } from "./InvitationLink";

const STATE_WORDS: Record<api.Invitation["state"], string> = { pending: "Waiting", used: "Used", expired: "Expired" };

/** 422 and 409 concern the address: said under its field; anything else under the form. */
function emailProblem(error: unknown): string | null {
  if (!(error instanceof api.ApiError)) return null;
  const field = error.errors.find((e) => e.field === "email");
  if (field) return `Email ${field.message.replace(/\.$/, "")}.`;
  return error.status === 409 && !error.detail.includes("SIGNUP") ? error.detail : null;
}

function InviteForm({ onIssued }: { onIssued: (invitation: api.IssuedInvitation) => void }) {
  const [email, setEmail] = useState("");
  const [submitted, setSubmitted] = useState(false);
  const create = useMutation({
    mutationFn: () => api.answer(client.POST("/invitations", { body: { email: email.trim() } })),
    onSuccess: async (invitation) => {
      announce(`Invitation for ${invitation.email} made.`);
      setEmail("");
      setSubmitted(false);
      onIssued(invitation);
      await invalidate(keys.invitations);
    },
  });
  const missing = submitted && !email.trim() ? "Enter the email address to invite." : null;
  const problem = missing ?? emailProblem(create.error);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setSubmitted(true);
    create.reset();
    if (email.trim()) create.mutate();
  };
  return (
    <form className="card" onSubmit={submit} aria-label="Invite someone" noValidate>
      <h2>Invite someone</h2>
      <p className="muted">An invitation lets one address sign up, once, within 7 days. You send its link yourself: Sluice sends no email.</p>
      <div className="field">
        <label htmlFor="invite-email">Email</label>
        <input
          id="invite-email"
          type="email"
          value={email}
          onChange={(e) => setEmail(e.target.value)}
          aria-invalid={problem ? true : undefined}
          aria-describedby={problem ? "invite-email-error" : undefined}
          autoComplete="off"
        />
        {problem && (
          <p className="field-error" id="invite-email-error" role="alert">
            {problem}
          </p>
        )}
      </div>
      <div className="form-actions">
        <button type="submit" className="primary" disabled={create.isPending}>
          {create.isPending ? "Inviting…" : "Make invitation link"}
        </button>
      </div>
      {!problem && <ErrorText error={create.error} />}
    </form>
  );
}

function InvitationRow({ invitation, groupName }: { invitation: api.Invitation; groupName: string | null }) {
  const withdraw = useMutation({
    mutationFn: () => api.answer(client.DELETE("/invitations/{id}", { params: { path: { id: invitation.id } } })),
    onSuccess: () => {
      announce(`Invitation for ${invitation.email} withdrawn.`);
      return invalidate(keys.invitations);
    },
  });
  return (
    <tr>
      <th scope="row" className="wrap-anywhere">
        {invitation.email}
      </th>
      <td data-label="Into group">{groupName ?? "—"}</td>
      <td data-label="State">{STATE_WORDS[invitation.state]}</td>
      <td data-label="Until">{invitation.state === "used" ? `Used ${formatTime(invitation.used_at)}` : formatTime(invitation.expires_at)}</td>
      <td className="actions-cell">
        {invitation.state !== "used" && (
          <ConfirmButton
            label={`Withdraw invitation for ${invitation.email}`}
            confirmLabel="Yes, withdraw"
            question={`Withdraw the invitation for ${invitation.email}? Its link stops working.`}
            onConfirm={() => withdraw.mutate()}
            busy={withdraw.isPending}
          />
        )}
        <ErrorText error={withdraw.error} />
      </td>
    </tr>
  );
}

/** Administrators: make, see and withdraw invitations (GET/POST/DELETE /invitations). */
export function InvitationsPage() {
  const heading = usePageHeading("Invitations");
  const me = useQuery(queries.me());
  const isAdmin = me.data?.is_admin === true;
  const invitations = useQuery({ ...queries.invitations(), enabled: isAdmin });
  const groups = useQuery(queries.groups());
  const [issued, setIssued] = useState<api.IssuedInvitation | null>(null);
  const groupName = (id: string | null) => (id ? (groups.data?.find((g) => g.id === id)?.group_name ?? "a group you are not in") : null);
  return (
    <div className="page">
      <h1 ref={heading} tabIndex={-1}>
        Invitations
      </h1>
      {!isAdmin ? (
        <Empty>Only an administrator of this instance makes invitations. To bring someone in, ask your administrator.</Empty>
      ) : (
        <>
          <InviteForm onIssued={setIssued} />
          {/* Withdrawn since: its link no longer works, so it is not shown. */}
          {issued && invitations.data?.some((i) => i.id === issued.id) !== false && <InvitationLink invitation={issued} />}
          <section className="card" aria-labelledby="invitations-heading">
            <h2 id="invitations-heading">Invitations made</h2>
            {invitations.isPending ? (
              <Loading />
            ) : invitations.error ? (
              <ErrorText error={invitations.error} />
            ) : invitations.data.length === 0 ? (
              <Empty>No invitations yet.</Empty>
            ) : (
              <div className="table-wrap">
                <table className="stack-table">
                  <thead>
                    <tr>
                      <th scope="col">Email</th>
                      <th scope="col">Into group</th>
                      <th scope="col">State</th>
                      <th scope="col">Until</th>
                      <th scope="col">
                        <span className="sr-only">Actions</span>
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {invitations.data.map((invitation) => (
                      <InvitationRow key={invitation.id} invitation={invitation} groupName={groupName(invitation.group_id)} />
                    ))}
                  </tbody>
                </table>
              </div>
            )}
          </section>
        </>
      )}
    </div>
  );
}
