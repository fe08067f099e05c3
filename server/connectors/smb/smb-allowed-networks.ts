import { lookup } from "node:dns/promises";
import { BlockList, isIP } from "node:net";
import { SmbUnreachableError } from "./smb-errors";

/** Where SMB sources may dial, as plain data (it crosses to the job and check threads). */
export interface SmbDialRules {
  /** SMB_ALLOWED_NETWORKS (`address/prefix`); null: any address, but on a LAN server none of the special ranges below. */
  networks: string[] | null;
  /** SMB_ALLOWED_PORTS; null: any port on the desktop, 445 and 139 on a LAN server. */
  ports: number[] | null;
  /** The API is reachable from the LAN (HOST is not a loopback address). */
  lan: boolean;
}

/** The ports a LAN server's sources may dial without SMB_ALLOWED_PORTS: direct TCP and NetBIOS session. */
export const SMB_PORTS: readonly number[] = [445, 139];

/**
 * Addresses a LAN server's sources never dial unless SMB_ALLOWED_NETWORKS lists them: this
 * machine (loopback, 0.0.0.0/8 and ::), link-local (169.254/16 holds the cloud metadata service;
 * fe80::/10) and multicast (issue 34: SSRF). BlockList matches IPv4-mapped IPv6 addresses too.
 */
const SPECIAL = new BlockList();
SPECIAL.addSubnet("127.0.0.0", 8, "ipv4");
SPECIAL.addSubnet("0.0.0.0", 8, "ipv4");
SPECIAL.addSubnet("169.254.0.0", 16, "ipv4");
SPECIAL.addSubnet("224.0.0.0", 4, "ipv4");
SPECIAL.addAddress("255.255.255.255", "ipv4");
// ::/96 holds ::, ::1 and the deprecated IPv4-compatible forms (::127.0.0.1).
SPECIAL.addSubnet("::", 96, "ipv6");
SPECIAL.addSubnet("fe80::", 10, "ipv6");
SPECIAL.addSubnet("ff00::", 8, "ipv6");

/** Loopback, this-network, link-local, multicast or broadcast (IPv4, IPv6, IPv4-mapped). */
export function isSpecialAddress(address: string): boolean {
  const family = isIP(address);
  return family !== 0 && SPECIAL.check(address, family === 4 ? "ipv4" : "ipv6");
}

/**
 * SMB_ALLOWED_NETWORKS and SMB_ALLOWED_PORTS: where SMB sources may point (docs/security.md: Data
 * and sources). With neither set on the desktop, anywhere. Otherwise every connection (creating a
 * source, listing its shares, each ingestion run) resolves the server's name itself, checks each
 * address it resolves to, dials a checked address, and checks the address the socket reached; a
 * refused destination is never dialled and always gets the same answer, whatever is (or is not)
 * listening there, so the API is no port scanner.
 */
export class SmbAllowedNetworks {
  private readonly list = new BlockList();
  readonly ports: number[] | null;
  readonly lan: boolean;

  /** `entries`: normalised `address/prefix` strings (see net/network-entry.ts); null allows any address (on a LAN server, any but the special ranges). */
  constructor(
    readonly entries: string[] | null,
    rules: { ports?: number[] | null; lan?: boolean } = {},
  ) {
    this.ports = rules.ports ?? null;
    this.lan = rules.lan ?? false;
    for (const entry of entries ?? []) {
      const [address, prefix] = entry.split("/");
      this.list.addSubnet(address, Number(prefix), isIP(address) === 4 ? "ipv4" : "ipv6");
    }
  }

  static fromRules(rules: SmbDialRules): SmbAllowedNetworks {
    return new SmbAllowedNetworks(rules.networks, { ports: rules.ports, lan: rules.lan });
  }

  get rules(): SmbDialRules {
    return { networks: this.entries, ports: this.ports, lan: this.lan };
  }

  /** Whether anything is checked at all (the desktop with neither setting checks nothing). */
  get restricted(): boolean {
    return this.entries !== null || this.ports !== null || this.lan;
  }

  allows(address: string): boolean {
    const family = isIP(address);
    if (this.entries === null) return !this.lan || (family !== 0 && !isSpecialAddress(address));
    if (family === 0) return false;
    // BlockList matches IPv4-mapped IPv6 addresses (::ffff:10.0.0.1) against IPv4 networks too.
    return this.list.check(address, family === 4 ? "ipv4" : "ipv6");
  }

  allowsPort(port: number): boolean {
    if (this.ports !== null) return this.ports.includes(port);
    return !this.lan || SMB_PORTS.includes(port);
  }

  /**
   * The address to dial for `host` (default_ip or remote_system_name) and `port`: unrestricted,
   * the host as given (the socket resolves it). Restricted, the port must be allowed, and the name
   * is resolved here: with SMB_ALLOWED_NETWORKS, the first address inside it; without (a LAN
   * server), every address must be outside the special ranges, since a name that also resolves to
   * one could lead the socket there (DNS rebinding), and the first is dialled.
   */
  async addressFor(host: string, port?: number): Promise<string> {
    if (!this.restricted) return host;
    if (port !== undefined && !this.allowsPort(port)) throw new SmbPortNotAllowedError(port);
    let addresses: string[];
    const bare = host.replace(/^\[(.*)\]$/, "$1");
    if (isIP(bare)) addresses = [bare];
    else {
      try {
        addresses = (await lookup(host, { all: true })).map((a) => a.address);
      } catch (error) {
        throw new SmbUnreachableError("host_not_found", `Cannot resolve ${host}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
      }
    }
    if (this.entries === null) {
      if (addresses.length === 0 || !addresses.every((address) => this.allows(address))) throw new SmbAddressNotAllowedError(host);
      return addresses[0];
    }
    const allowed = addresses.find((address) => this.allows(address));
    if (allowed === undefined) throw new SmbAddressNotAllowedError(host);
    return allowed;
  }

  /** The address a socket actually reached, checked again (the dialled address must be one this allows). */
  checkPeer(host: string, remoteAddress: string | undefined): void {
    if (!this.restricted) return;
    if (remoteAddress === undefined || !this.allows(remoteAddress)) throw new SmbAddressNotAllowedError(host);
  }
}

const ASK_THE_ADMINISTRATOR = "ask the administrator";

/** The SMB server's address lies outside SMB_ALLOWED_NETWORKS (or, on a LAN server, in a special range): nothing was sent to it. */
export class SmbAddressNotAllowedError extends Error {
  constructor(host: string) {
    super(`The SMB server ${host} is outside the networks Sluice may connect to (SMB_ALLOWED_NETWORKS); ${ASK_THE_ADMINISTRATOR}`);
    this.name = "SmbAddressNotAllowedError";
  }
}

/** The port is not one SMB sources may dial (SMB_ALLOWED_PORTS; on a LAN server 445 and 139 by default): nothing was sent. */
export class SmbPortNotAllowedError extends SmbAddressNotAllowedError {
  constructor(port: number) {
    super("");
    this.message = `Port ${port} is not one Sluice may connect to for SMB (SMB_ALLOWED_PORTS); ${ASK_THE_ADMINISTRATOR}`;
    this.name = "SmbPortNotAllowedError";
  }
}
