import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import * as api from "../api";
import { queries } from "../api";
import { isDesktopApp } from "../desktop";

/** Who is looking: at the server's own machine (GET /instance), or this instance's administrator elsewhere. */
export interface Viewer {
  atTheMachine: boolean;
  isAdmin: boolean;
}

/** The viewer as the cached reads know them; until they answer, a LAN member (the words that name no setting). */
export function useViewer(): Viewer {
  const instance = useQuery(queries.instance());
  const me = useQuery(queries.me());
  return { atTheMachine: isDesktopApp() || instance.data?.can_change_settings === true, isAdmin: me.data?.is_admin === true };
}

/** What to tell this viewer when the model server does not answer: the settings only to whoever can change them (issue 34 item 10). */
export function serverDownMessage(status: api.ModelServerStatus | null, viewer: Viewer): string {
  if (!viewer.atTheMachine) {
    return viewer.isAdmin
      ? "The model server is not running, so models cannot be pulled or used. Whoever runs the Sluice server can start it."
      : "The model server is not running, so models cannot be pulled or used. Ask your administrator to start it.";
  }
  if (!status || status.on_this_machine) return "The model server is not running. Start Ollama on this computer, then try again.";
  return "The model server set in OLLAMA_HOST does not answer. Start Ollama there, or point OLLAMA_HOST at a running one and restart Sluice.";
}

export type ServerState = { state: "checking" } | { state: "known"; status: api.ModelServerStatus } | { state: "error"; error: unknown };

/** The model server's status, checked on load, on demand, and every few seconds while it is down (queries.modelServer). */
export function useModelServer() {
  const status = useQuery(queries.modelServer());
  const server: ServerState = status.data ? { state: "known", status: status.data } : status.error ? { state: "error", error: status.error } : { state: "checking" };
  const check = async () => {
    await status.refetch();
  };
  return { server, down: status.data?.reachable === false, check };
}

export function ModelServerBanner({ server, onCheck }: { server: ServerState; onCheck: () => Promise<void> }) {
  const [checking, setChecking] = useState(false);
  const viewer = useViewer();
  if (server.state === "checking") return null;
  if (server.state === "error") return <p className="error" role="alert">{api.errorMessage(server.error)}</p>;
  const { status } = server;
  if (status.reachable)
    return (
      <p className="muted small server-status" data-model-server="up">
        <span className="dot ok" aria-hidden="true" /> The model server is running{status.version ? ` (Ollama ${status.version})` : ""}.
      </p>
    );
  return (
    <div className="server-down" role="alert" data-model-server="down">
      <p>{serverDownMessage(status, viewer)}</p>
      <button
        type="button"
        disabled={checking}
        onClick={async () => {
          setChecking(true);
          try {
            await onCheck();
          } finally {
            setChecking(false);
          }
        }}
      >
        {checking ? "Checking…" : "Check again"}
      </button>
    </div>
  );
}
