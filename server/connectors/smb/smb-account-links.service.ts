/**
 * Linking a Windows account (issue 33 item 4): one NTLMv2 login to the source's server as that
 * account, its SID and groups over IPC$ (all of it on an SMB check thread, decision 0484), and
 * the link stored for that server. The password is used for that login only: never stored,
 * logged or returned.
 */
import crypto from "node:crypto";
import type { DataSource } from "typeorm";
import type { AttemptStore } from "../../accounts/attempt-store";
import { normaliseServer } from "../../accounts/smb-account-links";
import { requireDataSourceAccess } from "../../access/access";
import type { Actor } from "../../access/actor";
import { requireOwnSmbAccountLink } from "../../access/smb-account-links.access";
import { SmbAccountLink } from "../../data/entities/smb-account-link.entity";
import { isUniqueViolation } from "../../data/db-errors";
import { BadRequestError, ConflictError, ServiceUnavailableError, TooManyRequestsError } from "../../errors";
import { ConnectorAuthError, ConnectorUnreachableError } from "../connector";
import { SmbAddressNotAllowedError } from "./smb-allowed-networks";
import { SmbSourceRecord } from "./smb-source.entity";
import { SMB_CHECK_TIMEOUT_MS, SMB_SERVER_UNREACHABLE } from "./smb-sources.service";
import { smbConnectorOptions, type SmbSettings } from "./smb.connector";
import { smbIdentity } from "./smb-check-thread";
import { SmbUnreachableError } from "./smb-errors";
import type { SmbIdentity } from "./smb-identity";
import { parseSmbUsername } from "./smb-username";

/** The link's answer when the file server did not answer in time (a step's timeout or SMB_CHECK_DEADLINE_S). */
export const LINK_TIMED_OUT =
  "The file server did not answer in time, so the account was not linked; try again in a few minutes, and if it keeps happening ask your IT department to check the file server";

/** Failed logins allowed per Windows account (on one server) in the window: Sluice must not guess passwords or lock accounts out. */
export const LINK_ATTEMPTS = { limit: 5, windowMs: 15 * 60_000 };

export interface NewSmbAccountLink {
  dataSourceId: string;
  username: string;
  password: string;
}

export class SmbAccountLinks {
  constructor(
    private readonly db: DataSource,
    private readonly settings: SmbSettings,
    private readonly attempts: AttemptStore,
  ) {}

  async link(actor: Actor, input: NewSmbAccountLink): Promise<SmbAccountLink> {
    const source = await requireDataSourceAccess(this.db.manager, actor, input.dataSourceId);
    if (source.kind !== "smb") throw new BadRequestError("This data source is not an SMB share: Windows accounts are linked through an SMB source");
    const details = await this.db.manager.findOneOrFail(SmbSourceRecord, { where: { dataSourceId: source.id } });
    const server = normaliseServer(details.remoteSystemName);
    const key = `smb-link:${server}|${accountKey(input.username)}`;
    const member = crypto.randomUUID();
    const waitMs = await this.attempts.reserve([{ key, ...LINK_ATTEMPTS }], member);
    if (waitMs > 0) {
      const seconds = Math.max(1, Math.ceil(waitMs / 1000));
      throw new TooManyRequestsError(`Too many failed sign-ins as this Windows account; try again in ${seconds} seconds`, seconds);
    }
    let identity: SmbIdentity;
    try {
      const timeoutMs = Math.min(this.settings.timeoutMs, SMB_CHECK_TIMEOUT_MS);
      const options = await smbConnectorOptions({ ...details, remoteSystemUsername: input.username }, input.password, { ...this.settings, timeoutMs });
      // The login and the LSA/SAMR calls talk to a server the caller's source names: on a check thread, never this one, ended at SMB_CHECK_DEADLINE_S.
      identity = await smbIdentity(options, this.settings.checkDeadlineMs);
    } catch (error) {
      if (!countsAgainstAccount(error)) await this.attempts.release([key], member);
      throw linkFailure(error);
    }
    await this.attempts.release([key], member);
    return this.store(actor, source.id, server, identity);
  }

  list(actor: Actor): Promise<SmbAccountLink[]> {
    return this.db.manager.find(SmbAccountLink, { where: { userId: actor.userId }, order: { server: "ASC" } });
  }

  async unlink(actor: Actor, id: string): Promise<void> {
    const link = await requireOwnSmbAccountLink(this.db.manager, actor, id);
    await this.db.manager.delete(SmbAccountLink, { id: link.id });
  }

  /** One link per person and server: linking again replaces it. Another person's account answers 409. */
  private async store(actor: Actor, dataSourceId: string, server: string, identity: SmbIdentity): Promise<SmbAccountLink> {
    try {
      return await this.db.transaction(async (tx) => {
        const holder = await tx.findOne(SmbAccountLink, { where: { server, sid: identity.sid } });
        if (holder && holder.userId !== actor.userId) throw new ConflictError(`${identity.account} is already linked by another Sluice user`);
        await tx.delete(SmbAccountLink, { userId: actor.userId, server });
        const link = tx.create(SmbAccountLink, {
          id: crypto.randomUUID(),
          userId: actor.userId,
          dataSourceId,
          server,
          account: identity.account,
          sid: identity.sid,
          groupSidsJson: JSON.stringify(identity.groupSids),
          groupNamesJson: JSON.stringify(identity.groups),
          checkedAt: new Date(),
        });
        await tx.insert(SmbAccountLink, link);
        return link;
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw new ConflictError(`${identity.account} is already linked by another Sluice user`);
      throw error;
    }
  }
}

/**
 * Whether a failed link counts toward the account's LINK_ATTEMPTS (decision 0483): only the server
 * refusing the login (a wrong password, a locked or disabled account), which is a guess at the
 * password. An unreachable or silent server, one past the deadline or breaking SMB's rules, an
 * address Sluice may not dial, all check threads taken: no guess was made, and the person may
 * try again at once.
 */
export function countsAgainstAccount(error: unknown): boolean {
  return error instanceof ConnectorAuthError;
}

/**
 * What a failed link answers. Nothing was stored: the link is written only after the whole
 * lookup answered. A server that did not answer in time says so, since the person can do
 * something about it (try later, tell IT); any other unreachable server is the one answer of 0042.
 */
function linkFailure(error: unknown): unknown {
  if (error instanceof ConnectorAuthError) return new BadRequestError(`The server refused this Windows account: ${error.message}`);
  if (error instanceof SmbAddressNotAllowedError) return new BadRequestError(error.message);
  if (error instanceof SmbUnreachableError && error.reason === "timed_out") return new ServiceUnavailableError(LINK_TIMED_OUT);
  if (error instanceof ConnectorUnreachableError) return new ServiceUnavailableError(SMB_SERVER_UNREACHABLE);
  return error;
}

/** One counter per account however it is typed: DOMAIN\user, user@domain and user all count as `user`. */
function accountKey(typed: string): string {
  const { user } = parseSmbUsername(typed);
  return (user.includes("@") ? user.slice(0, user.indexOf("@")) : user).toLowerCase();
}
