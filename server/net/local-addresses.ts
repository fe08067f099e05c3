import net from "node:net";
import os from "node:os";

/** The loopback names every browser resolves to this machine without asking DNS. */
export const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "[::1]"];

const LOOPBACK = new net.BlockList();
LOOPBACK.addSubnet("127.0.0.0", 8, "ipv4");
LOOPBACK.addAddress("::1", "ipv6");

/** 127.0.0.0/8 and ::1, also IPv4-mapped (::ffff:127.0.0.1, as a dual-stack socket reports it); brackets allowed. */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  const ip = address.replace(/^\[(.*)\]$/, "$1").replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, "");
  const family = net.isIP(ip);
  return family !== 0 && LOOPBACK.check(ip, family === 4 ? "ipv4" : "ipv6");
}

/**
 * Whether a server bound to HOST is reachable from the LAN: anything but `localhost` and a
 * loopback address (0.0.0.0 and :: listen on every interface). Such a server applies the LAN
 * rules (SMB destinations, docs/security.md).
 */
export function isLanBinding(host: string): boolean {
  return !(host.trim().toLowerCase() === "localhost" || isLoopbackAddress(host.trim()));
}

/** A host (as URL.hostname gives it) that only reaches this machine: a loopback name, or 0.0.0.0 / [::]. */
export function isThisMachineOnlyHost(hostname: string): boolean {
  const host = hostname.toLowerCase();
  return host === "localhost" || isLoopbackAddress(host) || host === "0.0.0.0" || host === "[::]";
}

/**
 * Whether a host a client here connects to is this machine: a Unix socket's directory (a path),
 * a loopback name or address, or one of this machine's own names and interface addresses.
 */
export function isThisMachine(host: string): boolean {
  if (host.startsWith("/")) return true;
  const name = host.toLowerCase();
  if (isThisMachineOnlyHost(name)) return true;
  return machineHostnames().includes(net.isIP(name) === 6 ? `[${name}]` : name);
}

/**
 * The names and addresses of this machine as a Host header carries them (lower case, IPv6 in
 * brackets): its host name, the short name and `.local` (mDNS), every interface address.
 */
export function machineHostnames(interfaces = os.networkInterfaces(), hostname = os.hostname()): string[] {
  const names = new Set<string>();
  const full = hostname.toLowerCase();
  if (full) {
    const short = full.split(".")[0];
    names.add(full).add(short).add(`${short}.local`);
  }
  for (const list of Object.values(interfaces)) {
    for (const entry of list ?? []) {
      // A link-local IPv6 address carries a zone (%eth0) that no Host header can name.
      const address = entry.address.split("%")[0].toLowerCase();
      names.add(entry.family === "IPv6" ? `[${address}]` : address);
    }
  }
  return [...names];
}
