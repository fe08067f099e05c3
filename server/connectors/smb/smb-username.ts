/**
 * The one place that reads a user name as people type it for an SMB login
 * (`remote_system_username`): `DOMAIN\user`, `user@domain` or plain `user`.
 */

export interface SmbAccount {
  /** The user name sent in the NTLM AUTHENTICATE message. */
  user: string;
  /** The domain sent with it; undefined: the server's own, from its NTLM challenge. */
  domain: string | undefined;
}

/**
 * - `DOMAIN\user`: that domain and user.
 * - `user@domain.example` (a UPN): sent whole as the user with an empty domain, as Windows
 *   does (MS-NLMP 2.2.1.3); the server resolves it (a domain member through its directory,
 *   Samba through `username map`).
 * - `user`: the `domain` option when given, else the domain the server names in its challenge.
 */
export function parseSmbUsername(typed: string, domainOption?: string): SmbAccount {
  const name = typed.trim();
  const slash = name.indexOf("\\");
  if (slash >= 0) return { domain: name.slice(0, slash), user: name.slice(slash + 1) };
  if (name.includes("@")) return { user: name, domain: "" };
  return { user: name, domain: domainOption || undefined };
}
