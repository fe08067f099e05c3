import net from "node:net";

/**
 * OLLAMA_HOST read the way Ollama itself reads it (its envconfig `Host()`), so the value that
 * starts `ollama serve` also reaches it from Sluice: quotes and spaces around it are dropped; the
 * scheme is optional (http); without a port, http:// means 80, https:// 443 and no scheme 11434;
 * without a host, 127.0.0.1; a path after the address is kept (a reverse proxy's prefix).
 * Where Ollama differs because it is the server and we are a client:
 * - an unspecified bind address (`0.0.0.0`, `::`, or none as in `:11434`) means this machine,
 *   so it becomes loopback (connecting to 0.0.0.0 fails on Windows);
 * - a port that is not 0-65535 and a scheme other than http(s) are errors, where Ollama warns
 *   and falls back: a typo must not silently send Sluice to another port.
 * Answers the base URL without a trailing slash, e.g. `http://127.0.0.1:11434`.
 */
export function parseOllamaHost(raw: string): string {
  const value = raw.trim().replace(/^["']+|["']+$/g, "").trim();
  if (value === "ollama.com") return "https://ollama.com";
  let scheme = "http";
  let defaultPort = "11434";
  let rest = value;
  const schemeEnd = value.indexOf("://");
  if (schemeEnd >= 0) {
    scheme = value.slice(0, schemeEnd).toLowerCase();
    rest = value.slice(schemeEnd + 3);
    if (scheme === "http") defaultPort = "80";
    else if (scheme === "https") defaultPort = "443";
    else throw new Error(`must use http:// or https:// (or no scheme), not ${scheme}://`);
  }
  const slash = rest.indexOf("/");
  const hostport = slash >= 0 ? rest.slice(0, slash) : rest;
  const urlPath = slash >= 0 ? rest.slice(slash + 1).replace(/\/+$/, "") : "";

  const split = splitHostPort(hostport);
  let host: string;
  let port: string;
  if (split) {
    ({ host, port } = split);
    if (port === "") port = defaultPort;
  } else {
    // No port: an address alone (IPv6 with or without brackets), a name alone, or nothing.
    port = defaultPort;
    const bare = hostport.replace(/^\[|\]$/g, "");
    host = net.isIP(bare) ? bare : hostport;
  }
  if (!/^\d{1,5}$/.test(port) || Number(port) > 65535) throw new Error("must have a port from 0 to 65535");
  host = connectableHost(host);

  let url: URL;
  try {
    url = new URL(`${scheme}://${net.isIPv6(host) ? `[${host}]` : host}:${port}/${urlPath}`);
  } catch {
    throw new Error("must be an address such as 127.0.0.1:11434, localhost or http://host:11434");
  }
  if (url.hostname === "" || url.username || url.password || url.search || url.hash) {
    throw new Error("must be an address such as 127.0.0.1:11434, localhost or http://host:11434");
  }
  return url.toString().replace(/\/$/, "");
}

/** Go's net.SplitHostPort: `host:port` or `[v6]:port`; null when there is no port part. */
function splitHostPort(hostport: string): { host: string; port: string } | null {
  if (hostport.startsWith("[")) {
    const close = hostport.indexOf("]");
    if (close < 0 || hostport[close + 1] !== ":") return null;
    return { host: hostport.slice(1, close), port: hostport.slice(close + 2) };
  }
  const colon = hostport.lastIndexOf(":");
  if (colon < 0 || hostport.indexOf(":") !== colon) return null;
  return { host: hostport.slice(0, colon), port: hostport.slice(colon + 1) };
}

/** A bind-all address, or no host at all, names this machine. */
function connectableHost(host: string): string {
  if (host === "" || host === "0.0.0.0") return "127.0.0.1";
  if (net.isIPv6(host) && /^[0:]+$/.test(host)) return "::1";
  return host;
}
