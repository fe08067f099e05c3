import { useMutation, useQuery } from "@tanstack/react-query";
import { announce, ErrorText } from "../components";
import { desktopLanAccess } from "../desktop";

/**
 * The desktop app's "Allow LAN access" (the tray has the same): the server restarts on every
 * address over HTTPS with the app's own certificate, and the window reloads on it
 * (docs/decisions/0462-desktop-lan-all-https.md). Only in the desktop app.
 */
export function LanAccess() {
  const lan = desktopLanAccess();
  const state = useQuery({ queryKey: ["desktop-lan-access"], queryFn: () => lan!.getLanAccess(), enabled: lan !== undefined, staleTime: Number.POSITIVE_INFINITY });
  const change = useMutation({
    mutationFn: (enabled: boolean) => lan!.setLanAccess(enabled),
    onMutate: (enabled) => announce(enabled ? "Starting Sluice for the LAN over HTTPS…" : "Stopping LAN access…"),
    onSuccess: () => state.refetch(),
  });
  if (!lan) return null;
  const enabled = state.data?.enabled ?? false;
  return (
    <section className="card" aria-labelledby="lan-access-heading">
      <h2 id="lan-access-heading">LAN access</h2>
      <div className="field checkbox-field">
        <label>
          <input
            type="checkbox"
            id="lan-access"
            checked={enabled}
            disabled={state.isPending || change.isPending}
            onChange={(e) => change.mutate(e.target.checked)}
            aria-describedby="lan-access-hint"
          />{" "}
          Allow colleagues on the LAN to use Sluice on this computer
        </label>
        <p id="lan-access-hint" className="hint">
          Sluice restarts on this computer's network addresses over HTTPS, with a certificate it makes itself. Colleagues need an account here: invite them.
        </p>
      </div>
      <ErrorText error={change.error ?? state.error} />
      {enabled && state.data && state.data.urls.length > 0 && (
        <>
          <p>Colleagues open:</p>
          <ul className="plain compact" aria-label="Addresses for colleagues">
            {state.data.urls.map((url) => (
              <li key={url}>
                <code className="wrap-anywhere">{url}</code>
              </li>
            ))}
          </ul>
        </>
      )}
      {enabled && state.data && state.data.urls.length === 0 && <p>This computer has no network address yet: connect it to the LAN.</p>}
    </section>
  );
}
