/**
 * The cryptography of SMB 2.x and 3.x (MS-SMB2 3.1.4): message signing (HMAC-SHA256,
 * AES-128-CMAC, AES-128-GMAC), the SP800-108 key derivation of SMB 3.x session keys, and
 * the TRANSFORM_HEADER encryption (AES-128-GCM, AES-128-CCM). Everything runs on Node's
 * native OpenSSL; CMAC is RFC 4493 over AES-CBC because Node has no CMAC of its own.
 */
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";

export const Dialect = { SMB202: 0x0202, SMB210: 0x0210, SMB300: 0x0300, SMB302: 0x0302, SMB311: 0x0311 } as const;

/** SigningAlgorithmId of the SMB2_SIGNING_CAPABILITIES context; HMAC-SHA256 is the 2.x one. */
export const SigningAlgorithm = { HMAC_SHA256: 0, AES_CMAC: 1, AES_GMAC: 2 } as const;
export type SigningAlgorithmId = (typeof SigningAlgorithm)[keyof typeof SigningAlgorithm];

/** Cipher of the SMB2_ENCRYPTION_CAPABILITIES context. */
export const Cipher = { AES_128_CCM: 1, AES_128_GCM: 2 } as const;
export type CipherId = (typeof Cipher)[keyof typeof Cipher];

const SIGNATURE_OFFSET = 48;
const SIGNATURE_LENGTH = 16;
const FLAGS_OFFSET = 16;
const MESSAGE_ID_OFFSET = 24;
const COMMAND_OFFSET = 12;
const SERVER_TO_REDIR = 0x1;
const CANCEL = 0x0c;
const ZERO_IV = Buffer.alloc(16);

// ---- SP800-108 key derivation (MS-SMB2 3.1.4.2) ----

/** KDF in counter mode, PRF HMAC-SHA256, r = 32, L = 128: one iteration gives the 16 bytes. */
function sp800108(key: Buffer, label: Buffer, context: Buffer): Buffer {
  const counter = Buffer.from([0, 0, 0, 1]);
  const length = Buffer.from([0, 0, 0, 128]);
  return createHmac("sha256", key).update(counter).update(label).update(Buffer.alloc(1)).update(context).update(length).digest().subarray(0, 16);
}

const z = (s: string): Buffer => Buffer.from(`${s}\0`, "latin1");

export interface SessionKeys {
  signingKey: Buffer;
  /** Client to server. */
  encryptionKey: Buffer;
  /** Server to client. */
  decryptionKey: Buffer;
}

/**
 * The keys of an SMB session. 2.x signs with the session key itself and has no encryption;
 * 3.0/3.0.2 derive with fixed contexts; 3.1.1 takes the preauth integrity hash as context,
 * so any tampering with NEGOTIATE or SESSION_SETUP yields keys the server does not have.
 */
export function deriveSessionKeys(dialect: number, sessionKey: Buffer, preauthHash?: Buffer): SessionKeys {
  const key = sessionKey.subarray(0, 16);
  if (dialect < Dialect.SMB300) return { signingKey: Buffer.from(key), encryptionKey: Buffer.alloc(0), decryptionKey: Buffer.alloc(0) };
  if (dialect < Dialect.SMB311) {
    return {
      signingKey: sp800108(key, z("SMB2AESCMAC"), z("SmbSign")),
      encryptionKey: sp800108(key, z("SMB2AESCCM"), z("ServerIn ")),
      decryptionKey: sp800108(key, z("SMB2AESCCM"), z("ServerOut")),
    };
  }
  if (!preauthHash) throw new Error("SMB 3.1.1 keys need the preauth integrity hash");
  return {
    signingKey: sp800108(key, z("SMBSigningKey"), preauthHash),
    encryptionKey: sp800108(key, z("SMBC2SCipherKey"), preauthHash),
    decryptionKey: sp800108(key, z("SMBS2CCipherKey"), preauthHash),
  };
}

/** The SMB 3.1.1 preauth integrity hash: H(i) = SHA-512(H(i-1) || message), H(0) = 64 zero bytes. */
export class PreauthHash {
  value: Buffer = Buffer.alloc(64);
  update(message: Buffer): void {
    this.value = createHash("sha512").update(this.value).update(message).digest();
  }
}

// ---- AES-128-CMAC (RFC 4493) ----

function doubleBlock(b: Buffer): Buffer {
  const out = Buffer.alloc(16);
  for (let i = 0; i < 16; i++) out[i] = ((b[i] << 1) | (i < 15 ? b[i + 1] >> 7 : 0)) & 0xff;
  if (b[0] & 0x80) out[15] ^= 0x87;
  return out;
}

/** AES-CMAC with one key; the subkeys K1 and K2 are made once. */
export class AesCmac {
  private readonly k1: Buffer;
  private readonly k2: Buffer;

  constructor(private readonly key: Buffer) {
    const cipher = createCipheriv("aes-128-ecb", key, null).setAutoPadding(false);
    const l = cipher.update(Buffer.alloc(16));
    this.k1 = doubleBlock(l);
    this.k2 = doubleBlock(this.k1);
  }

  /** The MAC of the concatenation of `parts` (no copy of the message is made). */
  mac(...parts: Buffer[]): Buffer {
    const total = parts.reduce((n, p) => n + p.length, 0);
    const complete = total > 0 && total % 16 === 0;
    const headLength = complete ? total - 16 : total - (total % 16);
    const cipher = createCipheriv("aes-128-cbc", this.key, ZERO_IV).setAutoPadding(false);
    const last = Buffer.alloc(16);
    let seen = 0;
    let lastFill = 0;
    for (const p of parts) {
      const inHead = Math.max(0, Math.min(p.length, headLength - seen));
      if (inHead > 0) cipher.update(p.subarray(0, inHead));
      if (inHead < p.length) {
        p.copy(last, lastFill, inHead);
        lastFill += p.length - inHead;
      }
      seen += p.length;
    }
    if (!complete) last[lastFill] = 0x80;
    const sub = complete ? this.k1 : this.k2;
    for (let i = 0; i < 16; i++) last[i] ^= sub[i];
    const out = cipher.update(last);
    return out.subarray(out.length - 16);
  }
}

// ---- Message signing ----

/** Signs outgoing and verifies incoming SMB2 messages of one session. */
export class MessageSigner {
  private readonly cmac: AesCmac | undefined;

  constructor(
    readonly algorithm: SigningAlgorithmId,
    private readonly key: Buffer,
  ) {
    if (algorithm === SigningAlgorithm.AES_CMAC) this.cmac = new AesCmac(key);
  }

  /** The signature of `message` as if its signature field were zero (the field is zeroed in place). */
  private compute(message: Buffer): Buffer {
    message.fill(0, SIGNATURE_OFFSET, SIGNATURE_OFFSET + SIGNATURE_LENGTH);
    switch (this.algorithm) {
      case SigningAlgorithm.HMAC_SHA256:
        return createHmac("sha256", this.key).update(message).digest().subarray(0, 16);
      case SigningAlgorithm.AES_CMAC:
        return this.cmac!.mac(message);
      case SigningAlgorithm.AES_GMAC: {
        // MS-SMB2 3.1.4.1: the nonce is the MessageId, then a bit for "response" and one for CANCEL.
        const nonce = Buffer.alloc(12);
        message.copy(nonce, 0, MESSAGE_ID_OFFSET, MESSAGE_ID_OFFSET + 8);
        const flags = message.readUInt32LE(FLAGS_OFFSET);
        nonce.writeUInt32LE((flags & SERVER_TO_REDIR ? 1 : 0) | (message.readUInt16LE(COMMAND_OFFSET) === CANCEL ? 2 : 0), 8);
        const gcm = createCipheriv("aes-128-gcm", this.key, nonce);
        gcm.setAAD(message);
        gcm.final();
        return gcm.getAuthTag();
      }
    }
  }

  /** Sets SMB2_FLAGS_SIGNED and writes the signature into the message. */
  sign(message: Buffer): void {
    message.writeUInt32LE((message.readUInt32LE(FLAGS_OFFSET) | 0x8) >>> 0, FLAGS_OFFSET);
    this.compute(message).copy(message, SIGNATURE_OFFSET);
  }

  /** Whether the signature in `message` is right. The message's signature field is left zeroed. */
  verify(message: Buffer): boolean {
    if (message.length < 64) return false;
    const claimed = Buffer.from(message.subarray(SIGNATURE_OFFSET, SIGNATURE_OFFSET + SIGNATURE_LENGTH));
    return timingSafeEqual(claimed, this.compute(message));
  }
}

// ---- Encryption: the SMB2 TRANSFORM_HEADER (MS-SMB2 2.2.41, 3.1.4.3) ----

const TRANSFORM_HEADER_SIZE = 52;
export const TRANSFORM_PROTOCOL_ID = 0xfd534d42;

export class TransformError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TransformError";
  }
}

/**
 * Encrypts and decrypts whole SMB2 messages (or compound chains) of one session. Nonces are a
 * random prefix and a counter, so one key never sees a nonce twice.
 */
export class MessageCipher {
  private readonly algorithm: "aes-128-gcm" | "aes-128-ccm";
  private readonly nonceLength: number;
  private readonly noncePrefix: Buffer;
  private counter = 0n;

  constructor(
    readonly cipher: CipherId,
    private readonly encryptionKey: Buffer,
    private readonly decryptionKey: Buffer,
    private readonly sessionId: bigint,
  ) {
    this.algorithm = cipher === Cipher.AES_128_GCM ? "aes-128-gcm" : "aes-128-ccm";
    this.nonceLength = cipher === Cipher.AES_128_GCM ? 12 : 11;
    this.noncePrefix = randomBytes(this.nonceLength - 8);
  }

  private nextNonce(): Buffer {
    const nonce = Buffer.alloc(this.nonceLength);
    this.noncePrefix.copy(nonce, 0);
    nonce.writeBigUInt64LE(this.counter++, this.nonceLength - 8);
    return nonce;
  }

  /**
   * A transform header followed by the ciphertext of `messages` (laid end to end), as buffers
   * to write. `nonceField` (the header's 16-byte Nonce) is for test vectors only.
   */
  encrypt(messages: Buffer[], nonceField?: Buffer): Buffer[] {
    const size = messages.reduce((n, m) => n + m.length, 0);
    const header = Buffer.alloc(TRANSFORM_HEADER_SIZE);
    header.writeUInt32BE(TRANSFORM_PROTOCOL_ID, 0);
    (nonceField ?? this.nextNonce()).copy(header, 20);
    const nonce = header.subarray(20, 20 + this.nonceLength);
    header.writeUInt32LE(size, 36);
    header.writeUInt16LE(1, 42); // Flags: Encrypted (3.1.1) / EncryptionAlgorithm AES-128-CCM (3.0.x): both 1
    header.writeBigUInt64LE(this.sessionId, 44);
    const aad = header.subarray(20);
    const out: Buffer[] = [header];
    if (this.algorithm === "aes-128-gcm") {
      const c = createCipheriv("aes-128-gcm", this.encryptionKey, nonce);
      c.setAAD(aad);
      for (const m of messages) out.push(c.update(m));
      out.push(c.final());
      c.getAuthTag().copy(header, 4);
    } else {
      // CCM takes its input in one piece.
      const c = createCipheriv("aes-128-ccm", this.encryptionKey, nonce, { authTagLength: 16 });
      c.setAAD(aad, { plaintextLength: size });
      out.push(c.update(messages.length === 1 ? messages[0] : Buffer.concat(messages, size)));
      out.push(c.final());
      c.getAuthTag().copy(header, 4);
    }
    return out;
  }

  /** The plaintext of a transform message; throws TransformError if it does not authenticate. */
  decrypt(transform: Buffer): Buffer {
    if (transform.length < TRANSFORM_HEADER_SIZE || transform.readUInt32BE(0) !== TRANSFORM_PROTOCOL_ID) {
      throw new TransformError("Not an SMB2 TRANSFORM_HEADER");
    }
    const size = transform.readUInt32LE(36);
    if (size !== transform.length - TRANSFORM_HEADER_SIZE) throw new TransformError("Encrypted message of the wrong length");
    if (transform.readBigUInt64LE(44) !== this.sessionId) throw new TransformError("Encrypted message for another session");
    const nonce = transform.subarray(20, 20 + this.nonceLength);
    const aad = transform.subarray(20, TRANSFORM_HEADER_SIZE);
    const tag = transform.subarray(4, 20);
    const ciphertext = transform.subarray(TRANSFORM_HEADER_SIZE);
    try {
      if (this.algorithm === "aes-128-gcm") {
        const d = createDecipheriv("aes-128-gcm", this.decryptionKey, nonce);
        d.setAuthTag(tag);
        d.setAAD(aad);
        const plain = d.update(ciphertext);
        d.final();
        return plain;
      }
      const d = createDecipheriv("aes-128-ccm", this.decryptionKey, nonce, { authTagLength: 16 });
      d.setAuthTag(tag);
      d.setAAD(aad, { plaintextLength: size });
      const plain = d.update(ciphertext);
      d.final();
      return plain;
    } catch {
      throw new TransformError("An encrypted reply failed authentication (tampered with, or not from the server)");
    }
  }
}
