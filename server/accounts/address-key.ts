import { isIP } from "node:net";

/**
 * The address a limit counts a client under: an IPv4 address as it is, an IPv6 address by its
 * /64 network (one host is usually given a whole /64, so counting single addresses would give
 * it 2^64 budgets), an IPv4-mapped IPv6 address (`::ffff:192.0.2.1`) as its IPv4 address.
 */
export function addressKey(ip: string): string {
  const address = ip.replace(/%.*$/, "");
  if (isIP(address) !== 6) return ip;
  const groups = expandIpv6(address);
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return `${groups[6] >> 8}.${groups[6] & 0xff}.${groups[7] >> 8}.${groups[7] & 0xff}`;
  }
  return `${groups.slice(0, 4).map((g) => g.toString(16)).join(":")}::/64`;
}

/** The eight 16-bit groups of a valid IPv6 address (`::` and a dotted IPv4 tail expanded). */
function expandIpv6(address: string): number[] {
  let text = address.toLowerCase();
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number);
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split("::");
  const left = head ? head.split(":") : [];
  const right = tail === undefined ? [] : tail ? tail.split(":") : [];
  const missing = tail === undefined ? 0 : 8 - left.length - right.length;
  return [...left, ...Array<string>(missing).fill("0"), ...right].map((g) => Number.parseInt(g, 16));
}
