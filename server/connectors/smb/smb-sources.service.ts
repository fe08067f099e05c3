import type { DataSource } from "typeorm";
import { requireDataSourceAccess } from "../../access/access";
import type { Actor } from "../../access/actor";
import { BadRequestError, HttpError, ServiceUnavailableError } from "../../errors";
import { ConnectorAuthError, ConnectorUnreachableError } from "../connector";
import type { CreatedSource, SourceCreator, SourceKind } from "../source-kind";
import { SmbSourceRecord, smbPasswordKey } from "./smb-source.entity";
import { smbConnectorOptions, type ShareListing, type SmbDetails, type SmbSettings } from "./smb.connector";
import { checkSmbConnection, listSmbShares } from "./smb-check-thread";
import { SmbAddressNotAllowedError } from "./smb-allowed-networks";
import { smbFailure } from "./smb-failure";

export interface NewSmbSource extends SmbDetails {
  name: string;
  password: string;
  sourcePermissions: boolean;
}

const INVALID_SMB_CREDENTIALS = "Invalid SMB credentials";
/**
 * The connection check at creation gives each step (TCP connect, each request) this long, not
 * SMB_TIMEOUT_MS: the user is waiting on the form, and a server that accepts TCP and never
 * answers must fail within 5 s (issue 21). Ingestion keeps SMB_TIMEOUT_MS for slow servers.
 */
export const SMB_CHECK_TIMEOUT_MS = 4_000;
/**
 * The whole answer for a server that can't be reached: a closed port, a silent one, a name that
 * does not resolve and a protocol error all read the same, so the API is no port scanner
 * (docs/decisions/0042-smb-failures-one-answer.md).
 */
export const SMB_SERVER_UNREACHABLE = "SMB server unreachable";

/** SMB sources: creation (credentials checked first) and the share listing. */
export class SmbSources {
  constructor(
    private readonly db: DataSource,
    private readonly sources: SourceCreator,
    private readonly kind: SourceKind,
    private readonly settings: SmbSettings,
  ) {}

  /** Verifies the credentials by connecting, then the shared steps; the password goes to the secret store only. */
  create(actor: Actor, groupId: string, input: NewSmbSource): Promise<CreatedSource<SmbSourceRecord>> {
    return this.sources.create(actor, {
      kind: this.kind.name,
      name: input.name,
      groupId,
      verify: () => this.verify(input),
      secrets: (sourceId) => ({ [smbPasswordKey(sourceId)]: input.password }),
      details: async (tx, sourceId) => {
        const smb = tx.create(SmbSourceRecord, {
          dataSourceId: sourceId,
          remoteSystemUsername: input.remoteSystemUsername,
          remoteSystemName: input.remoteSystemName,
          localSystemName: input.localSystemName,
          defaultIp: input.defaultIp,
          port: input.port,
          sourcePermissions: input.sourcePermissions,
        });
        await tx.insert(SmbSourceRecord, smb);
        return smb;
      },
    });
  }

  /** Every share of the server with its first-level entries; 503 when the server can't be reached. */
  async shareListing(actor: Actor, dataSourceId: string): Promise<ShareListing> {
    const source = await requireDataSourceAccess(this.db.manager, actor, dataSourceId);
    if (source.kind !== this.kind.name) throw new BadRequestError("This data source is not an SMB share");
    try {
      const spec = await this.kind.threadConnector?.(this.db.manager, source);
      if (spec?.kind !== "smb") throw new BadRequestError("This data source is not an SMB share");
      return await listSmbShares(spec.options, this.settings.checkDeadlineMs);
    } catch (error) {
      if (error instanceof SmbAddressNotAllowedError) throw new BadRequestError(error.message);
      if (error instanceof ConnectorUnreachableError) throw new ServiceUnavailableError(SMB_SERVER_UNREACHABLE);
      if (error instanceof ConnectorAuthError) throw new BadRequestError(`${INVALID_SMB_CREDENTIALS}: the server refused the stored user name or password`);
      throw error;
    }
  }

  /**
   * A refused login and an unreachable server both answer 400 Invalid SMB credentials (spec),
   * with a `reason` and a `hint` naming what to fix (smb-failure.ts); an address outside
   * SMB_ALLOWED_NETWORKS says so, and nothing is sent to it.
   */
  private async verify(input: NewSmbSource): Promise<void> {
    try {
      const timeoutMs = Math.min(this.settings.timeoutMs, SMB_CHECK_TIMEOUT_MS);
      const options = await smbConnectorOptions(input, input.password, { ...this.settings, timeoutMs });
      await checkSmbConnection(options, this.settings.checkDeadlineMs);
    } catch (error) {
      if (error instanceof SmbAddressNotAllowedError) throw new BadRequestError(error.message);
      const failure = smbFailure(error);
      if (failure) throw new HttpError(400, INVALID_SMB_CREDENTIALS, { ...failure });
      throw error;
    }
  }
}
