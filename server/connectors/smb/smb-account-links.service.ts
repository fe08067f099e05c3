/**
 * Linking a Windows account (issue 33 item 4): one NTLMv2 login to the source's server as that
 * account, its SID and groups over IPC$, and the link stored for that server. The password is
 * used for that login only: never stored, logged or returned.
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
import { openSmbConnector, type SmbConnector, type SmbSettings } from "./smb.connector";
import { parseSmbUsername } from "./smb-username";

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
    let connector: SmbConnector | undefined;
    let identity: Awaited<ReturnType<SmbConnector["identity"]>>;
    try {
      const timeoutMs = Math.min(this.settings.timeoutMs, SMB_CHECK_TIMEOUT_MS);
      connector = await openSmbConnector({ ...details, remoteSystemUsername: input.username }, input.password, { ...this.settings, timeoutMs });
      identity = await connector.identity();
    } catch (error) {
      // Only a refused login counts against the account; anything else was no guess at its password.
      if (!(error instanceof ConnectorAuthError)) await this.attempts.release([key], member);
      if (error instanceof ConnectorAuthError) throw new BadRequestError(`The server refused this Windows account: ${error.message}`);
      if (error instanceof SmbAddressNotAllowedError) throw new BadRequestError(error.message);
      if (error instanceof ConnectorUnreachableError) throw new ServiceUnavailableError(SMB_SERVER_UNREACHABLE);
      throw error;
    } finally {
      await connector?.close();
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
  private async store(actor: Actor, dataSourceId: string, server: string, identity: Awaited<ReturnType<SmbConnector["identity"]>>): Promise<SmbAccountLink> {
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

/** One counter per account however it is typed: DOMAIN\user, user@domain and user all count as `user`. */
function accountKey(typed: string): string {
  const { user } = parseSmbUsername(typed);
  return (user.includes("@") ? user.slice(0, user.indexOf("@")) : user).toLowerCase();
}
