/**
 * Typed errors for SMB security failures, so callers can tell them apart and say why (a
 * later mapping turns `reason` into user-facing reasons). They extend the Connector error
 * kinds the rest of Sluice already handles: a session we cannot trust or cannot protect as
 * the server demands fails like an unreachable server (source creation refused, job failed),
 * and a refused login is an authentication error.
 */
import { ConnectorAuthError, ConnectorUnreachableError } from "../connector";

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
