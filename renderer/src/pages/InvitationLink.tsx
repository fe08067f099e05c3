import { useId, useState } from "react";
import type * as api from "../api";
import { formatTime } from "../format";

/** A new invitation's link, shown this once (only its hash is kept): to copy and send to the person invited. */
export function InvitationLink({ invitation, groupName }: { invitation: api.IssuedInvitation; groupName?: string }) {
  const id = useId();
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    await navigator.clipboard.writeText(invitation.link);
    setCopied(true);
  };
  return (
    <div className="note invitation-link" role="status">
      <p>
        {groupName ? `No account has ${invitation.email} yet. ` : ""}Send {invitation.email} this link: it signs up that address{groupName ? ` into ${groupName}` : ""}, once,
        until {formatTime(invitation.expires_at)}. It is shown only now.
      </p>
      <label htmlFor={id}>Invitation link for {invitation.email}</label>
      <div className="inline-form">
        <input id={id} readOnly value={invitation.link} onFocus={(e) => e.currentTarget.select()} spellCheck={false} />
        <button type="button" onClick={() => void copy()}>
          {copied ? "Copied" : "Copy link"}
        </button>
      </div>
    </div>
  );
}
