import { lookup } from "node:dns/promises";
import { BlockList, isIP } from "node:net";
import { SmbUnreachableError } from "./smb-errors";

/**
 * SMB_ALLOWED_NETWORKS: the networks SMB sources may point at (docs/security.md: Data and
 * sources). Unset, any address is allowed. Set, every connection (creating a source, listing
 * its shares, each ingestion run) resolves the server's name itself, checks the address and
 * dials that very address, so a name that points elsewhere, now or after a DNS change, is refused.
 */
export class SmbAllowedNetworks {
  private readonly list = new BlockList();

  /** `entries`: normalised `address/prefix` strings (see net/network-entry.ts); null allows any address. */
  constructor(readonly entries: string[] | null) {
    for (const entry of entries ?? []) {
      const [address, prefix] = entry.split("/");
      this.list.addSubnet(address, Number(prefix), isIP(address) === 4 ? "ipv4" : "ipv6");
    }
  }

  allows(address: string): boolean {
    if (this.entries === null) return true;
    const family = isIP(address);
    if (family === 0) return false;
    // BlockList matches IPv4-mapped IPv6 addresses (::ffff:10.0.0.1) against IPv4 networks too.
    return this.list.check(address, family === 4 ? "ipv4" : "ipv6");
  }

  /**
   * The address to dial for `host` (default_ip or remote_system_name): unrestricted, the host as
   * given (the socket resolves it); restricted, the first address the name resolves to that lies
   * in an allowed network.
   */
  async addressFor(host: string): Promise<string> {
    if (this.entries === null) return host;
    let addresses: string[];
    if (isIP(host)) addresses = [host];
    else {
      try {
        addresses = (await lookup(host, { all: true })).map((a) => a.address);
      } catch (error) {
        throw new SmbUnreachableError("host_not_found", `Cannot resolve ${host}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
      }
    }
    const allowed = addresses.find((address) => this.allows(address));
    if (allowed === undefined) throw new SmbAddressNotAllowedError(host);
    return allowed;
  }
}

/** The SMB server's address lies outside SMB_ALLOWED_NETWORKS: nothing was sent to it. */
export class SmbAddressNotAllowedError extends Error {
  constructor(host: string) {
    super(`The SMB server ${host} is outside the networks Sluice may connect to (SMB_ALLOWED_NETWORKS); ask the administrator`);
    this.name = "SmbAddressNotAllowedError";
  }
}
