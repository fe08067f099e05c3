/**
 * MD4 (RFC 1320), needed only for the NT hash of NTLM. Node 20 ships OpenSSL 3,
 * which leaves MD4 in the legacy provider, so createHash("md4") throws there.
 */

const ORDER = [
  [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
  [0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15],
  [0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15],
];
const SHIFTS = [
  [3, 7, 11, 19],
  [3, 5, 9, 13],
  [3, 9, 11, 15],
];
const CONSTANTS = [0, 0x5a827999, 0x6ed9eba1];

function rotl(x: number, s: number): number {
  return ((x << s) | (x >>> (32 - s))) >>> 0;
}

function mix(round: number, x: number, y: number, z: number): number {
  if (round === 0) return (x & y) | (~x & z);
  if (round === 1) return (x & y) | (x & z) | (y & z);
  return x ^ y ^ z;
}

export function md4(input: Uint8Array): Buffer {
  const len = input.length;
  const total = Math.ceil((len + 9) / 64) * 64;
  const msg = Buffer.alloc(total);
  msg.set(input, 0);
  msg[len] = 0x80;
  const bits = len * 8;
  msg.writeUInt32LE(bits % 0x100000000, total - 8);
  msg.writeUInt32LE(Math.floor(bits / 0x100000000), total - 4);

  const h = [0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476];
  const words = new Array<number>(16);
  for (let block = 0; block < total; block += 64) {
    for (let i = 0; i < 16; i++) words[i] = msg.readUInt32LE(block + i * 4);
    const r = h.slice();
    for (let step = 0; step < 48; step++) {
      const round = step >> 4;
      const idx = step & 15;
      // Steps rotate the target register a, d, c, b; the other three follow it cyclically.
      const t = (4 - (idx & 3)) & 3;
      const f = mix(round, r[(t + 1) & 3], r[(t + 2) & 3], r[(t + 3) & 3]);
      const sum = (r[t] + f + words[ORDER[round][idx]] + CONSTANTS[round]) >>> 0;
      r[t] = rotl(sum, SHIFTS[round][idx & 3]);
    }
    for (let i = 0; i < 4; i++) h[i] = (h[i] + r[i]) >>> 0;
  }
  const out = Buffer.alloc(16);
  h.forEach((v, i) => {
    out.writeUInt32LE(v, i * 4);
  });
  return out;
}
