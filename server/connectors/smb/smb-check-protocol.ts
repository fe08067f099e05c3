/**
 * The SMB check thread's calls (smb-check.worker.ts answers them, smb-check-thread.ts makes
 * them) and how a failure crosses back: as plain data that rebuilds the typed error the API's
 * answers depend on (reason, kind), since thread errors keep only a message and a name.
 */
import { ConnectorAuthError, ConnectorEntryError, ConnectorUnreachableError } from "../connector";
import { SmbAddressNotAllowedError } from "./smb-allowed-networks";
import {
  SmbBadSignatureError,
  SmbEncryptionRequiredError,
  SmbLogonError,
  SmbSecurityError,
  SmbSigningRequiredError,
  SmbUnreachableError,
  type SmbUnreachableReason,
} from "./smb-errors";
import type { ShareListing, SmbConnectorOptions } from "./smb.connector";
import type { SmbIdentity } from "./smb-identity";
import type { LinkedGroups } from "../../accounts/smb-account-links";

/** A failure as it crosses: which error it was, its reason where it has one, its words. */
export type SmbCheckFailure =
  | { kind: "unreachable"; reason: SmbUnreachableReason; message: string }
  | { kind: "security"; reason: SmbSecurityError["reason"]; message: string }
  | { kind: "logon" | "auth" | "connector" | "not_allowed" | "other"; message: string }
  | { kind: "entry"; path: string; message: string };

export type SmbCheckResult<T> = { ok: true; value: T } | { ok: false; failure: SmbCheckFailure };

export interface SmbCheckCalls {
  /** Connects and signs in (source creation's check). */
  test(options: SmbConnectorOptions): SmbCheckResult<null>;
  /** Every disk share with its first-level names (GET /data_sources/smb/list/{id}). */
  shareListing(options: SmbConnectorOptions): SmbCheckResult<ShareListing>;
  /** Signs in as a person's Windows account and asks who it is (LSA) and its groups (SAMR): linking it (POST /users/me/smb_accounts). */
  identity(options: SmbConnectorOptions): SmbCheckResult<SmbIdentity>;
  /** With a source's own account, the groups of some linked accounts (by SID) and the groups' names: one batch of a refresh. */
  linkedGroups(options: SmbConnectorOptions, sids: string[]): SmbCheckResult<LinkedGroups>;
}

export function toCheckFailure(error: unknown): SmbCheckFailure {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof SmbUnreachableError) return { kind: "unreachable", reason: error.reason, message };
  if (error instanceof SmbSecurityError) return { kind: "security", reason: error.reason, message };
  if (error instanceof SmbLogonError) return { kind: "logon", message };
  if (error instanceof ConnectorAuthError) return { kind: "auth", message };
  if (error instanceof ConnectorEntryError) return { kind: "entry", path: error.path, message };
  if (error instanceof ConnectorUnreachableError) return { kind: "connector", message };
  if (error instanceof SmbAddressNotAllowedError) return { kind: "not_allowed", message };
  return { kind: "other", message };
}

const SECURITY_ERRORS = {
  bad_signature: SmbBadSignatureError,
  signing_required: SmbSigningRequiredError,
  encryption_required: SmbEncryptionRequiredError,
} as const;

export function fromCheckFailure(failure: SmbCheckFailure): Error {
  switch (failure.kind) {
    case "unreachable":
      return new SmbUnreachableError(failure.reason, failure.message);
    case "security":
      return new SECURITY_ERRORS[failure.reason](failure.message);
    case "logon":
      return new SmbLogonError(failure.message);
    case "auth":
      return new ConnectorAuthError(failure.message);
    case "entry":
      return new ConnectorEntryError(failure.path, failure.message);
    case "connector":
      return new ConnectorUnreachableError(failure.message);
    case "not_allowed":
      return Object.assign(new SmbAddressNotAllowedError(""), { message: failure.message });
    case "other":
      return new Error(failure.message);
  }
}
