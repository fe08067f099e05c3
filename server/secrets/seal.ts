import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

/** AES-256-GCM, as both the encrypted secrets file and the team database seal their values. */
export const SEAL_KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

export interface Sealed {
  iv: Buffer;
  tag: Buffer;
  data: Buffer;
}

/**
 * Encrypts `value` under `key`. The secret's name is authenticated too, so a ciphertext
 * moved to another name (another source's password, say) does not open.
 */
export function seal(key: Buffer, name: string, value: string): Sealed {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(Buffer.from(name, "utf8"));
  const data = Buffer.concat([cipher.update(value, "utf8"), cipher.final()]);
  return { iv, tag: cipher.getAuthTag(), data };
}

/** Decrypts what seal() made; throws when the key, the name or the bytes differ. */
export function unseal(key: Buffer, name: string, sealed: Sealed): string {
  if (sealed.iv.length !== IV_BYTES || sealed.tag.length !== TAG_BYTES) throw new Error("bad IV or auth tag length");
  const decipher = createDecipheriv("aes-256-gcm", key, sealed.iv);
  decipher.setAAD(Buffer.from(name, "utf8"));
  decipher.setAuthTag(sealed.tag);
  return Buffer.concat([decipher.update(sealed.data), decipher.final()]).toString("utf8");
}

/** One base64 string (IV, tag, ciphertext), for a database column. */
export function packSealed(sealed: Sealed): string {
  return Buffer.concat([sealed.iv, sealed.tag, sealed.data]).toString("base64");
}

export function unpackSealed(text: string): Sealed {
  const bytes = Buffer.from(text, "base64");
  return { iv: bytes.subarray(0, IV_BYTES), tag: bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES), data: bytes.subarray(IV_BYTES + TAG_BYTES) };
}
