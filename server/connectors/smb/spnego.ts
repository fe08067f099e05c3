/**
 * SPNEGO (RFC 4178, MS-SPNG) around NTLMSSP: the NegTokenInit the client opens with, the
 * NegTokenResp it answers with (carrying the mechListMIC), and the server's tokens. Only the
 * DER the exchange needs: definite lengths, the few tags below.
 */

const SPNEGO_OID = Buffer.from([0x2b, 0x06, 0x01, 0x05, 0x05, 0x02]); // 1.3.6.1.5.5.2
export const NTLMSSP_OID = Buffer.from([0x2b, 0x06, 0x01, 0x04, 0x01, 0x82, 0x37, 0x02, 0x02, 0x0a]); // 1.3.6.1.4.1.311.2.2.10

const Tag = { OID: 0x06, OCTET_STRING: 0x04, ENUMERATED: 0x0a, SEQUENCE: 0x30, APPLICATION_0: 0x60 } as const;
const ctx = (n: number) => 0xa0 + n;

export const NegState = { ACCEPT_COMPLETED: 0, ACCEPT_INCOMPLETE: 1, REJECT: 2, REQUEST_MIC: 3 } as const;

function der(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  const n = body.length;
  const len = n < 0x80 ? [n] : n < 0x100 ? [0x81, n] : n < 0x10000 ? [0x82, n >> 8, n & 0xff] : [0x83, n >> 16, (n >> 8) & 0xff, n & 0xff];
  return Buffer.concat([Buffer.from([tag, ...len]), body]);
}

interface Tlv {
  tag: number;
  value: Buffer;
  /** Bytes the whole element takes. */
  size: number;
}

function readTlv(b: Buffer, off = 0): Tlv {
  if (off + 2 > b.length) throw new Error("Truncated SPNEGO token");
  const tag = b[off];
  let len = b[off + 1];
  let head = 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 3 || off + 2 + n > b.length) throw new Error("Malformed SPNEGO length");
    len = 0;
    for (let i = 0; i < n; i++) len = (len << 8) | b[off + 2 + i];
    head += n;
  }
  if (off + head + len > b.length) throw new Error("Truncated SPNEGO token");
  return { tag, value: b.subarray(off + head, off + head + len), size: head + len };
}

/** The elements of a constructed value (a SEQUENCE's fields), in order. */
function children(b: Buffer): Tlv[] {
  const out: Tlv[] = [];
  for (let off = 0; off < b.length; ) {
    const t = readTlv(b, off);
    out.push(t);
    off += t.size;
  }
  return out;
}

/** The DER MechTypeList offering NTLMSSP only: what the mechListMIC signs. */
export function mechTypeList(): Buffer {
  return der(Tag.SEQUENCE, der(Tag.OID, NTLMSSP_OID));
}

/** The client's first token: NegTokenInit offering NTLMSSP, with the NTLM NEGOTIATE message. */
export function negTokenInit(mechToken: Buffer): Buffer {
  const init = der(Tag.SEQUENCE, der(ctx(0), mechTypeList()), der(ctx(2), der(Tag.OCTET_STRING, mechToken)));
  return der(Tag.APPLICATION_0, der(Tag.OID, SPNEGO_OID), der(ctx(0), init));
}

/** The client's answer: NegTokenResp with the NTLM AUTHENTICATE message and, when set, the mechListMIC. */
export function negTokenResp(responseToken: Buffer, mechListMic?: Buffer): Buffer {
  const fields = [der(ctx(2), der(Tag.OCTET_STRING, responseToken))];
  if (mechListMic) fields.push(der(ctx(3), der(Tag.OCTET_STRING, mechListMic)));
  return der(ctx(1), der(Tag.SEQUENCE, ...fields));
}

export interface ServerNegTokenResp {
  negState?: number;
  supportedMech?: Buffer;
  responseToken?: Buffer;
  mechListMic?: Buffer;
}

/** Parses the server's NegTokenResp (a [1]-tagged SEQUENCE of optional fields). */
export function parseNegTokenResp(token: Buffer): ServerNegTokenResp {
  const outer = readTlv(token);
  if (outer.tag !== ctx(1)) throw new Error("The server's SPNEGO answer is not a NegTokenResp");
  const seq = readTlv(outer.value);
  if (seq.tag !== Tag.SEQUENCE) throw new Error("Malformed NegTokenResp");
  const out: ServerNegTokenResp = {};
  for (const field of children(seq.value)) {
    const inner = readTlv(field.value);
    switch (field.tag) {
      case ctx(0):
        if (inner.tag === Tag.ENUMERATED && inner.value.length === 1) out.negState = inner.value[0];
        break;
      case ctx(1):
        if (inner.tag === Tag.OID) out.supportedMech = inner.value;
        break;
      case ctx(2):
        if (inner.tag === Tag.OCTET_STRING) out.responseToken = inner.value;
        break;
      case ctx(3):
        if (inner.tag === Tag.OCTET_STRING) out.mechListMic = inner.value;
        break;
    }
  }
  return out;
}

/**
 * The mechanisms a server offers in the NegTokenInit2 of its NEGOTIATE response; null when
 * the buffer is empty or not SPNEGO (such a server takes raw NTLMSSP).
 */
export function offeredMechs(securityBuffer: Buffer): Buffer[] | null {
  if (securityBuffer.length === 0) return null;
  try {
    const app = readTlv(securityBuffer);
    if (app.tag !== Tag.APPLICATION_0) return null;
    const [oid, init] = children(app.value);
    if (oid?.tag !== Tag.OID || !oid.value.equals(SPNEGO_OID) || init?.tag !== ctx(0)) return null;
    const seq = readTlv(init.value);
    const mechTypes = children(seq.value).find((f) => f.tag === ctx(0));
    if (!mechTypes) return [];
    return children(readTlv(mechTypes.value).value)
      .filter((t) => t.tag === Tag.OID)
      .map((t) => t.value);
  } catch {
    return null;
  }
}
