import type { DocumentLocation } from "../source-kind";

const SMB_PORT = 445;

/**
 * A file on a share as Windows and other clients name it: the UNC path `\\server\share\dir\file`
 * (copyable into Explorer) and the URL `smb://server[:port]/share/dir/file` (macOS Finder, Linux
 * file managers). `documentPath` is the index's path, "share/dir/file". The server is the name
 * the source was given for it (remote_system_name), else its address.
 */
export function smbLocation(source: { remoteSystemName: string; defaultIp: string | null; port: number }, documentPath: string): DocumentLocation {
  const server = source.remoteSystemName.trim() || source.defaultIp;
  if (!server) return { path: null, url: null };
  const parts = documentPath.split("/").filter((p) => p !== "");
  // An IPv6 address is bracketed in a URL; UNC names it with its literal (ipv6-literal.net) form, left as given here.
  const host = server.includes(":") ? `[${server}]` : server;
  const port = source.port && source.port !== SMB_PORT ? `:${source.port}` : "";
  return {
    path: `\\\\${server}\\${parts.join("\\")}`,
    url: `smb://${host}${port}/${parts.map(encodeURIComponent).join("/")}`,
  };
}
