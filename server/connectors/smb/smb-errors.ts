/**
 * Typed errors for SMB security failures, so callers can tell them apart and say why (a
 * later mapping turns `reason` into user-facing reasons). They extend the Connector error
 * kinds the rest of Sluice already handles: a session we cannot trust or cannot protect as
 * the server demands fails like an unreachable server (source creation refused, job failed),
 * and a refused login is an authentication error.
 */
import { ConnectorAuthError, ConnectorEntryError, ConnectorUnreachableError } from "../connector";

export type SmbSecurityReason = "bad_signature" | "signing_required" | "encryption_required";

export class SmbSecurityError extends ConnectorUnreachableError {
  constructor(
    readonly reason: SmbSecurityReason,
    message: string,
  ) {
    super(message);
    this.name = "SmbSecurityError";
  }
}

/**
 * A reply whose signature (or encryption tag) does not check out, or an unprotected reply
 * where the session is signed or encrypted: it may have been changed on the way, so it is
 * never used.
 */
export class SmbBadSignatureError extends SmbSecurityError {
  constructor(message: string) {
    super("bad_signature", message);
    this.name = "SmbBadSignatureError";
  }
}

/** The server requires signing and the session cannot sign (e.g. a guest or anonymous session). */
export class SmbSigningRequiredError extends SmbSecurityError {
  constructor(message: string) {
    super("signing_required", message);
    this.name = "SmbSigningRequiredError";
  }
}

/** The server requires encryption (for the session or a share) and no cipher is shared with it. */
export class SmbEncryptionRequiredError extends SmbSecurityError {
  constructor(message: string) {
    super("encryption_required", message);
    this.name = "SmbEncryptionRequiredError";
  }
}

/** The server refused the user name or password. */
export class SmbLogonError extends ConnectorAuthError {
  readonly reason = "logon_failure";
  constructor(message: string) {
    super(message);
    this.name = "SmbLogonError";
  }
}

/**
 * Why the server could not be reached at all (smb2-connection.ts tells them apart by the socket's
 * error), or `protocol_error`: it answered, but broke SMB's rules or Sluice's bounds (issue 34).
 */
export type SmbUnreachableReason = "host_not_found" | "connection_refused" | "timed_out" | "protocol_error";

/** The server name does not resolve, nothing listens on the port, or the server stays silent. */
export class SmbUnreachableError extends ConnectorUnreachableError {
  constructor(
    readonly reason: SmbUnreachableReason,
    message: string,
  ) {
    super(message);
    this.name = "SmbUnreachableError";
  }
}

export type SmbShareReason = "share_not_found" | "access_denied";

/** A share the server does not have, or one this user may not open: the other shares still work. */
export class SmbShareError extends ConnectorEntryError {
  constructor(
    path: string,
    readonly reason: SmbShareReason,
    message: string,
  ) {
    super(path, message);
    this.name = "SmbShareError";
  }
}
