import os from "node:os";
import type { NextFunction, Request, Response } from "express";
import { ForbiddenError } from "../errors";
import { isLoopbackAddress, LOOPBACK_NAMES, machineHostnames } from "../net/local-addresses";

/** How often the machine's addresses are read again at most (DHCP, a VPN coming up), on a Host not yet known. */
const REFRESH_MS = 5_000;

export interface AllowedHostsOptions {
  /** HOST, the bind address: loopback means this machine only, anything else means LAN mode. */
  bindHost: string;
  /** The address browsers use (PUBLIC_URL, or the one listened on): its host is always accepted. */
  publicUrl: string;
  interfaces?: () => NodeJS.Dict<os.NetworkInterfaceInfo[]>;
  hostname?: () => string;
  now?: () => number;
}

/**
 * The names a request's Host header may carry, against DNS rebinding: a page on
 * evil.example whose name is re-pointed at this machine reaches the server with
 * `Host: evil.example:PORT`, and is refused. Bound to loopback: localhost, 127.0.0.1,
 * [::1] and the PUBLIC_URL host. In LAN mode also this machine's own addresses and names.
 * Only the host counts, not the port: rebinding changes the name, and a proxy may listen
 * on another port.
 */
export class AllowedHosts {
  private readonly fixed: Set<string>;
  private machine = new Set<string>();
  private readAt = -Infinity;
  private readonly lan: boolean;

  constructor(private readonly opts: AllowedHostsOptions) {
    const bind = opts.bindHost.toLowerCase();
    this.lan = bind !== "localhost" && !isLoopbackAddress(bind);
    this.fixed = new Set([...LOOPBACK_NAMES, new URL(opts.publicUrl).hostname.toLowerCase()]);
    if (this.lan) this.fixed.add(bind.includes(":") && !bind.startsWith("[") ? `[${bind}]` : bind);
  }

  allows(hostHeader: string | undefined): boolean {
    // HTTP/1.0 clients may send none; a browser always does, and rebinding needs one.
    if (hostHeader === undefined || hostHeader === "") return true;
    const host = hostnameOf(hostHeader);
    if (host === null) return false;
    if (this.fixed.has(host)) return true;
    if (!this.lan) return false;
    if (this.machine.has(host)) return true;
    const now = (this.opts.now ?? Date.now)();
    if (now - this.readAt < REFRESH_MS) return false;
    this.readAt = now;
    this.machine = new Set(machineHostnames((this.opts.interfaces ?? os.networkInterfaces)(), (this.opts.hostname ?? os.hostname)()));
    return this.machine.has(host);
  }
}

/** The host part of a Host header, lower case, IPv6 in brackets, without a trailing dot; null when it is not a host. */
export function hostnameOf(hostHeader: string): string | null {
  if (/[/\\@?#\s]/.test(hostHeader)) return null;
  try {
    return new URL(`http://${hostHeader}`).hostname.toLowerCase().replace(/\.$/, "") || null;
  } catch {
    return null;
  }
}

export function hostGuard(allowed: AllowedHosts) {
  return (req: Request, _res: Response, next: NextFunction): void => {
    const host = req.headers.host;
    if (!allowed.allows(host)) {
      const shown = (host ?? "").slice(0, 200);
      throw new ForbiddenError(`Host '${shown}' is not an address of this server; set PUBLIC_URL if you reach it under another name`);
    }
    next();
  };
}
