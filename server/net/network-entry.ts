// One entry of a setting that lists IP networks (SMB_ALLOWED_NETWORKS), parsed and normalised.
import { isIP } from "node:net";

/**
 * One entry of SMB_ALLOWED_NETWORKS, an IPv4 or IPv6 address or CIDR network (`192.168.10.0/24`,
 * `10.0.0.5`, `fd00::/8`), as `address/prefix`; throws a sentence saying what is wrong.
 */
export function parseNetworkEntry(entry: string): string {
  const [address, prefix, ...rest] = entry.split("/");
  const family = isIP(address);
  if (family === 0 || rest.length > 0) throw new Error(`"${entry}" is not an IP address or a network such as 192.168.10.0/24`);
  const max = family === 4 ? 32 : 128;
  if (prefix === undefined) return `${address}/${max}`;
  if (!/^\d{1,3}$/.test(prefix) || Number(prefix) > max) throw new Error(`"${entry}" has a prefix length outside 0 to ${max}`);
  return `${address}/${Number(prefix)}`;
}
