import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import type * as api from "../api";
import { isApiError, queries } from "../api";
import { Empty, ErrorText, Loading, usePageHeading } from "../components";
import { formatTime } from "../format";

/** What each action means, in the words of the person reading the trail. */
const ACTION_WORDS: Record<string, string> = {
  sign_in: "Signed in",
  "sign_in.failed": "Failed sign-in",
  sign_up: "Signed up",
  "sign_out.everywhere": "Signed out everywhere",
  "password.changed": "Changed password",
  "account.deleted": "Deleted an account",
  "api_key.created": "Made an API key",
  "api_key.revoked": "Revoked an API key",
  "invitation.created": "Invited someone",
  "invitation.deleted": "Withdrew an invitation",
  "group.created": "Created a group",
  "group.deleted": "Deleted a group",
  "group.member_added": "Added a group member",
  "group.member_removed": "Removed a group member",
  "group.parent_set": "Set a group's parent",
  "source.created": "Added a data source",
  "source.deleted": "Deleted a data source",
  "collection.created": "Created a collection",
  "collection.deleted": "Deleted a collection",
  "model.pull_requested": "Asked for a model download",
  "model.deleted": "Removed a model",
  "backup.made": "Made a backup",
  "backup.restored": "Restored a backup",
};

function EventRows({ events }: { events: api.AuditEvent[] }) {
  return (
    <>
      {events.map((event) => (
        <tr key={event.id}>
          <td>{formatTime(event.at)}</td>
          <td>{ACTION_WORDS[event.action] ?? event.action}</td>
          <td>{event.actor?.email ?? "—"}</td>
          <td>{event.address ?? "—"}</td>
          <td>
            {event.object_id ? <code>{event.object_id}</code> : null} {event.detail}
          </td>
        </tr>
      ))}
    </>
  );
}

/** One page of the trail; its last page offers the next (older) one. */
function AuditPageRows({ before, isLast, onNext }: { before: string | null; isLast: boolean; onNext: (next: string) => void }) {
  const page = useQuery(queries.audit(before));
  if (page.isPending)
    return (
      <tr>
        <td colSpan={5}>
          <Loading />
        </td>
      </tr>
    );
  if (page.error)
    return (
      <tr>
        <td colSpan={5}>
          <ErrorText error={page.error} />
        </td>
      </tr>
    );
  return (
    <>
      <EventRows events={page.data.events} />
      {isLast && page.data.next && (
        <tr>
          <td colSpan={5}>
            <button type="button" onClick={() => onNext(page.data.next!)}>
              Show older events
            </button>
          </td>
        </tr>
      )}
    </>
  );
}

/** The audit trail (administrators): who did what, from where, newest first. */
export function AuditPage() {
  const heading = usePageHeading("Audit trail");
  const first = useQuery(queries.audit(null));
  const [pages, setPages] = useState<string[]>([]);
  const forbidden = isApiError(first.error, 403);
  return (
    <div className="page">
      <h1 ref={heading} tabIndex={-1}>
        Audit trail
      </h1>
      {forbidden ? (
        <p>Only an administrator of this Sluice server can read its audit trail.</p>
      ) : (
        <>
          <p className="muted">Sign-ins, accounts, keys, groups, sources, collections and models, newest first. Events are kept for the days the server is set to keep them (90 unless changed).</p>
          {first.data && first.data.events.length === 0 ? (
            <Empty>No events yet.</Empty>
          ) : (
            <div className="table-scroll">
              <table className="audit-table">
                <caption className="sr-only">Audit events, newest first</caption>
                <thead>
                  <tr>
                    <th scope="col">When</th>
                    <th scope="col">What</th>
                    <th scope="col">Who</th>
                    <th scope="col">From</th>
                    <th scope="col">Object and detail</th>
                  </tr>
                </thead>
                <tbody>
                  <AuditPageRows before={null} isLast={pages.length === 0} onNext={(next) => setPages([next])} />
                  {pages.map((before, i) => (
                    <AuditPageRows key={before} before={before} isLast={i === pages.length - 1} onNext={(next) => setPages((all) => [...all.slice(0, i + 1), next])} />
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </>
      )}
    </div>
  );
}
