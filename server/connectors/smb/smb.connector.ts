/**
 * The SMB source behind the Connector interface. Paths are "share/dir/file";
 * "" is the server, whose children are its disk shares.
 */
import type { Readable } from "node:stream";
import {
  ConnectorAuthError,
  ConnectorEntryError,
  ConnectorUnreachableError,
  type Connector,
  type RemoteEntry,
} from "../connector";
import {
  Smb2Client,
  Smb2ConnectionLost,
  Smb2StatusError,
  Smb2Unreachable,
  type ShareInfo,
  type Smb2ClientStats,
} from "./smb2-client";
import { SmbLogonError, SmbShareError, SmbUnreachableError } from "./smb-errors";
import { AUTH_FAILURES, Command, FileAttribute, Status, statusName } from "./smb2-messages";
import { smbFailure } from "./smb-failure";
import { SmbAddressNotAllowedError, type SmbAllowedNetworks, type SmbDialRules } from "./smb-allowed-networks";
import { parseSecurityDescriptor } from "./security-descriptor";
import { ownerWhereItDecides } from "../../access/windows-acl";
import type { Dacl, FileAcl } from "../../search/stored-acl";
import { accountOf, groupNames, groupSids, type SmbIdentity } from "./smb-identity";
import { NtStatus, RpcCallError } from "./rpc-status";
import type { LinkedGroups } from "../../accounts/smb-account-links";

export interface SmbConnectorOptions {
  /** Address to connect to (default_ip, or remote_system_name when it resolves). */
  host: string;
  port: number;
  /** remote_system_name: the server name in UNC paths. */
  serverName: string;
  /** As typed: `DOMAIN\user`, `user@domain` or `user` (parsed in smb-username.ts). */
  username: string;
  password: string;
  /** The domain of a plain `user`; without it, the server's own (from its NTLM challenge). */
  domain?: string;
  /** local_system_name sent in NTLM. */
  workstation?: string;
  timeoutMs?: number;
  /** Where this instance may dial; the address the socket reached is checked again (absent: anywhere). */
  dialRules?: SmbDialRules;
}

/** The stored connection details of an SMB source (smb_sources), the password aside. */
export interface SmbDetails {
  remoteSystemUsername: string;
  remoteSystemName: string;
  localSystemName: string;
  defaultIp: string | null;
  port: number;
}

/** How this instance connects to SMB servers (SMB_TIMEOUT_MS, SMB_CHECK_DEADLINE_S, SMB_ALLOWED_NETWORKS and _PORTS). */
export interface SmbSettings {
  timeoutMs: number;
  /** The most a check (creation's test, a share listing) may take in all. */
  checkDeadlineMs: number;
  allowedNetworks: SmbAllowedNetworks;
}

/**
 * A connector for stored or submitted details: default_ip is dialled when given, else the server
 * name; with SMB_ALLOWED_NETWORKS set, the address it resolves to now, once checked. Every
 * connection (creation, share listing, each ingestion run) is made through here.
 */
export async function openSmbConnector(details: SmbDetails, password: string, settings: SmbSettings): Promise<SmbConnector> {
  return new SmbConnector(await smbConnectorOptions(details, password, settings));
}

/** What openSmbConnector connects with, as plain data (an ingestion job's thread opens its connector from it). */
export async function smbConnectorOptions(details: SmbDetails, password: string, settings: SmbSettings): Promise<SmbConnectorOptions> {
  return {
    host: await settings.allowedNetworks.addressFor(details.defaultIp || details.remoteSystemName, details.port),
    port: details.port,
    serverName: details.remoteSystemName,
    username: details.remoteSystemUsername,
    password,
    workstation: details.localSystemName || undefined,
    timeoutMs: settings.timeoutMs,
    dialRules: settings.allowedNetworks.restricted ? settings.allowedNetworks.rules : undefined,
  };
}

/** What the API shows for a server: each disk share's first-level names, or why it can't be read. */
export type ShareListing = Record<string, string[] | { error: string; reason?: string; hint?: string }>;

const STYPE_DISKTREE = 0;
/** Distinct descriptors a run keeps parsed: a share has a few; each is a few hundred bytes. */
const DISTINCT_DESCRIPTORS_KEPT = 4096;

export class SmbConnector implements Connector {
  readonly topLevelName = "share";
  private readonly client: Smb2Client;
  /** Each share's DACL, read once for the connector's life (NetrShareGetInfo level 502). */
  private readonly shareDacls = new Map<string, Promise<Dacl>>();
  /** Parsed file descriptors by share and bytes, the oldest out past DISTINCT_DESCRIPTORS_KEPT. */
  private readonly fileAcls = new Map<string, FileAcl>();

  constructor(private readonly opts: SmbConnectorOptions) {
    this.client = new Smb2Client({ ...opts, serverName: opts.serverName || opts.host });
  }

  /** Sessions, interim responses, dialect and signing of the underlying client. */
  get stats(): Readonly<Smb2ClientStats> {
    return this.client.stats;
  }

  async test(): Promise<void> {
    await this.call("", () => this.client.connect());
  }

  /** Every share the server announces (disk, IPC, printers), as NetrShareEnum returns them. */
  listShares(): Promise<ShareInfo[]> {
    return this.call("", () => this.client.listShares());
  }

  async list(path: string): Promise<RemoteEntry[]> {
    const { share, rest, parts } = splitPath(path);
    if (!share) {
      const shares = await this.listShares();
      return shares
        .filter((s) => s.type === STYPE_DISKTREE)
        .map((s) => ({ path: s.name, name: s.name, isDirectory: true, size: 0, modifiedAt: new Date(0) }));
    }
    const entries = await this.call(path, () => this.client.listDirectory(share, rest));
    const prefix = parts.join("/");
    return entries.map((e) => ({
      path: `${prefix}/${e.name}`,
      name: e.name,
      isDirectory: (e.attributes & FileAttribute.DIRECTORY) !== 0,
      size: e.size,
      modifiedAt: e.modifiedAt,
      changedAt: e.changedAt,
    }));
  }

  async stat(path: string): Promise<RemoteEntry> {
    const { share, rest, parts } = splitPath(path);
    if (!share) throw new ConnectorEntryError(path, "The server root has no attributes; stat a share or a path in one");
    const info = await this.call(path, () => this.client.stat(share, rest));
    return {
      path: parts.join("/"),
      name: parts[parts.length - 1],
      isDirectory: info.isDirectory,
      size: info.isDirectory ? 0 : info.size,
      modifiedAt: info.modifiedAt,
    };
  }

  async read(path: string, expectedSize?: number): Promise<Readable> {
    const { share, rest } = splitPath(path);
    if (!share || !rest) throw new ConnectorEntryError(path, "Not a file path");
    // Errors met mid-stream get the same typed errors as everything else.
    return this.call(path, () => this.client.createReadStream(share, rest, (e) => mapError(path, e, this.opts), expectedSize));
  }

  async readPermissions(path: string): Promise<FileAcl> {
    const { share, rest } = splitPath(path);
    if (!share) throw new ConnectorEntryError(path, "The server root has no permissions of its own");
    const descriptor = await this.call(path, () => this.client.querySecurity(share, rest));
    const shareDacl = await this.shareDacl(share);
    // Most files of a share carry one of a few descriptors: each distinct one is parsed once, and
    // its files share one FileAcl (so what is computed of it, such as its id, is computed once).
    const key = `${share}\u0000${descriptor.toString("latin1")}`;
    const known = this.fileAcls.get(key);
    if (known) return known;
    let parsed: ReturnType<typeof parseSecurityDescriptor>;
    try {
      parsed = parseSecurityDescriptor(descriptor);
    } catch (e) {
      if (e instanceof Error && e.name === "SecurityDescriptorError") throw new ConnectorEntryError(path, `${e.message}: ${path}`);
      throw e;
    }
    // The owner is kept only where it decides something (decision 0480), so most files share a few ACLs.
    const owner = ownerWhereItDecides(parsed.dacl, parsed.owner);
    const acl: FileAcl = { file: parsed.dacl, share: shareDacl, ...(owner ? { owner } : {}) };
    if (this.fileAcls.size >= DISTINCT_DESCRIPTORS_KEPT) this.fileAcls.delete(this.fileAcls.keys().next().value!);
    this.fileAcls.set(key, acl);
    return acl;
  }

  async readSharePermissions(path: string): Promise<Dacl> {
    const { share } = splitPath(path);
    if (!share) throw new ConnectorEntryError(path, "The server root has no permissions of its own");
    return this.shareDacl(share);
  }

  /** An account the server no longer has is in no group: its link keeps only Everyone's files and the like. */
  async resolveGroupSids(sid: string): Promise<string[]> {
    return this.call("", async () => {
      try {
        return await groupSids(this.client, this.opts.serverName || this.opts.host, sid);
      } catch (e) {
        if (e instanceof RpcCallError && e.status === NtStatus.NO_SUCH_USER) return [];
        throw e;
      }
    });
  }

  /** Names of SIDs as the server gives them (LSA LookupSids2): "DOMAIN\name", or the SID for one it cannot name. */
  groupNames(sids: string[]): Promise<Array<{ sid: string; name: string }>> {
    return this.call("", () => groupNames(this.client, sids));
  }

  /**
   * Several linked accounts' groups in this one session (a refresh's batch), with every group's
   * name as the server gives it now: one login and one LookupSids for the batch, not one per account.
   */
  async linkedGroups(sids: string[]): Promise<LinkedGroups> {
    const accounts: LinkedGroups["accounts"] = [];
    for (const sid of sids) accounts.push({ sid, groupSids: await this.resolveGroupSids(sid) });
    return { accounts, names: await this.groupNames([...new Set(accounts.flatMap((a) => a.groupSids))]) };
  }

  /** Who this connector is logged in as on the server (LSA), with its group SIDs (SAMR) and their names. */
  identity(): Promise<SmbIdentity> {
    return this.call("", async () => {
      const server = this.opts.serverName || this.opts.host;
      const account = await accountOf(this.client, this.opts.username);
      const sids = await groupSids(this.client, server, account.sid);
      return { ...account, groupSids: sids, groups: await groupNames(this.client, sids) };
    });
  }

  private shareDacl(share: string): Promise<Dacl> {
    let dacl = this.shareDacls.get(share);
    if (!dacl) {
      dacl = this.call(share, async () => {
        const sd = await this.client.shareDescriptor(share);
        return sd ? parseSecurityDescriptor(sd).dacl : null;
      });
      this.shareDacls.set(share, dacl);
      dacl.catch(() => this.shareDacls.delete(share));
    }
    return dacl;
  }

  /** For the API: each disk share with its first-level entry names, or a clear error. */
  async shareListing(): Promise<ShareListing> {
    const out: ShareListing = {};
    const shares = (await this.listShares()).filter((s) => s.type === STYPE_DISKTREE);
    for (const s of shares) {
      try {
        out[s.name] = (await this.list(s.name)).map((e) => e.name);
      } catch (e) {
        if (!(e instanceof ConnectorEntryError)) throw e;
        const failure = e instanceof SmbShareError ? smbFailure(e) : null;
        out[s.name] = failure ? { error: e.message, ...failure } : { error: e.message };
      }
    }
    return out;
  }

  close(): Promise<void> {
    return this.client.close();
  }

  private async call<T>(path: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      throw mapError(path, e, this.opts);
    }
  }
}

function splitPath(path: string): { share: string; rest: string; parts: string[] } {
  const parts = path.split("/").filter((p) => p !== "");
  if (parts.some((p) => p === "." || p === ".." || p.includes("\\"))) {
    throw new ConnectorEntryError(path, "Path segments may not be '.', '..' or contain '\\'");
  }
  return { share: parts[0] ?? "", rest: parts.slice(1).join("\\"), parts };
}

function mapError(path: string, e: unknown, o: SmbConnectorOptions): Error {
  const where = `${o.host}:${o.port}`;
  if (e instanceof ConnectorAuthError || e instanceof ConnectorEntryError || e instanceof ConnectorUnreachableError || e instanceof SmbAddressNotAllowedError) return e;
  if (e instanceof Smb2StatusError) {
    // Any refusal of the session itself is a failed login, never a problem with one path.
    if (AUTH_FAILURES.has(e.status) || e.command === Command.SESSION_SETUP) {
      return new SmbLogonError(`SMB login to ${where} as "${o.username}" failed (${statusName(e.status)})`);
    }
    const depth = path.split("/").filter(Boolean).length;
    if (e.status === Status.BAD_NETWORK_NAME) return new SmbShareError(path, "share_not_found", entryMessage(path, e.status));
    if (e.status === Status.ACCESS_DENIED && depth <= 1) return new SmbShareError(path, "access_denied", entryMessage(path, e.status));
    return new ConnectorEntryError(path, entryMessage(path, e.status));
  }
  if (e instanceof Smb2Unreachable) return new SmbUnreachableError(e.reason, e.message);
  if (e instanceof Smb2ConnectionLost) return new ConnectorUnreachableError(`${e.message} (${where})`);
  const msg = e instanceof Error ? e.message : String(e);
  return new SmbUnreachableError("protocol_error", `SMB protocol error talking to ${where}: ${msg}`);
}

function entryMessage(path: string, status: number): string {
  const share = path.split("/").filter(Boolean)[0] ?? "";
  switch (status) {
    case Status.ACCESS_DENIED:
      return path.split("/").filter(Boolean).length <= 1
        ? `Access denied to share "${share}" for this user`
        : `Access denied: ${path}`;
    case Status.BAD_NETWORK_NAME:
      return `No share named "${share}" on the server`;
    case Status.OBJECT_NAME_NOT_FOUND:
    case Status.OBJECT_PATH_NOT_FOUND:
      return `Not found: ${path}`;
    case Status.NOT_A_DIRECTORY:
      return `Not a folder: ${path}`;
    case Status.FILE_IS_A_DIRECTORY:
      return `Is a folder, not a file: ${path}`;
    case Status.SHARING_VIOLATION:
      return `In use by another program: ${path}`;
    default:
      return `${statusName(status)}: ${path}`;
  }
}
