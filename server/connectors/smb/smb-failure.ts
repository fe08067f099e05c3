/**
 * The one place that turns a failed SMB connection into a machine-readable `reason` and a `hint`
 * in plain words naming what to fix. The API adds both beside `detail` (400 Invalid SMB
 * credentials at creation, a share's `{error}` in the listing); the form puts the hint on the field
 * the reason concerns (renderer SourcesPage).
 */
import { ConnectorAuthError, ConnectorUnreachableError } from "../connector";
import { SmbSecurityError, SmbShareError, SmbUnreachableError } from "./smb-errors";

export type SmbFailureReason =
  | "logon_failure"
  | "host_not_found"
  | "connection_refused"
  | "timed_out"
  | "protocol_error"
  | "share_not_found"
  | "access_denied"
  | "signing_required"
  | "encryption_required"
  | "bad_signature";

export interface SmbFailure {
  reason: SmbFailureReason;
  hint: string;
}

const HINTS: Record<SmbFailureReason, string> = {
  logon_failure: "The server refused this user name or password. Check both (the user name as you sign in to Windows: DOMAIN\\user, user@domain or user).",
  host_not_found: "No computer with this server name was found. Check the spelling, or enter the server's IP address.",
  connection_refused: "The server refused the connection: nothing accepts file sharing on this port there. Check the IP address and the port (usually 445).",
  timed_out: "The server did not answer in time. Check the server name, IP address and port, and that a firewall lets this computer reach it.",
  protocol_error:
    "The server answered, but not as a file server should (malformed replies, or lists and waits without end), so Sluice stopped. Check the IP address and port, or ask the server's administrator.",
  share_not_found: "The server has no share with this name. Check the share's name.",
  access_denied: "This user may not open the share. Ask the server's administrator for access, or use another account.",
  signing_required: "The server requires signed connections, which a guest or anonymous sign-in cannot provide. Sign in with a user name and password.",
  encryption_required: "The server requires encryption that Sluice cannot agree on with it (SMB 3 with AES). Ask the server's administrator to allow it.",
  bad_signature: "The server's replies failed their integrity check, so none was used. Something between this computer and the server may be changing them.",
};

/** reason + hint for an SMB failure the user can act on; null for anything else. */
export function smbFailure(error: unknown): SmbFailure | null {
  const reason = reasonOf(error);
  return reason ? { reason, hint: HINTS[reason] } : null;
}

function reasonOf(error: unknown): SmbFailureReason | null {
  if (error instanceof SmbUnreachableError || error instanceof SmbSecurityError || error instanceof SmbShareError) return error.reason;
  if (error instanceof ConnectorAuthError) return "logon_failure";
  // A server that took the connection, then closed it or answered something that is not SMB.
  if (error instanceof ConnectorUnreachableError) return "connection_refused";
  return null;
}
