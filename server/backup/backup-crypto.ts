import crypto from "node:crypto";
import fs from "node:fs";
import { pipeline } from "node:stream/promises";

/**
 * A backup sealed with a passphrase: scrypt turns the passphrase and a random salt into two keys,
 * one for AES-256-GCM over each file (its path as associated data, so files cannot be swapped),
 * one for an HMAC over the manifest (so no entry can be changed, added or dropped). Node's own
 * crypto: nothing here is hand-made but the file layout (decision 0237).
 */

/** What the manifest says of how its files are sealed; salt in base64. */
export interface BackupSealing {
  cipher: "aes-256-gcm";
  kdf: "scrypt";
  salt: string;
  /** scrypt's cost parameters, kept so a later version may raise them and still open this backup. */
  N: number;
  r: number;
  p: number;
}

export interface BackupKeys {
  sealing: BackupSealing;
  fileKey: Buffer;
  manifestKey: Buffer;
}

/** 2^17: about 0.3 s and 128 MiB here, OWASP's floor for scrypt. */
const SCRYPT = { N: 2 ** 17, r: 8, p: 1 };
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** Keys for a new backup (fresh salt). */
export function newBackupKeys(passphrase: string): BackupKeys {
  return backupKeys(passphrase, { cipher: "aes-256-gcm", kdf: "scrypt", salt: crypto.randomBytes(16).toString("base64"), ...SCRYPT });
}

/** Keys for the backup a manifest describes. */
export function backupKeys(passphrase: string, sealing: BackupSealing): BackupKeys {
  if (sealing.cipher !== "aes-256-gcm" || sealing.kdf !== "scrypt") throw new Error("This backup is sealed in a way this version cannot open");
  const { N, r, p } = sealing;
  const derived = crypto.scryptSync(passphrase.normalize("NFC"), Buffer.from(sealing.salt, "base64"), 64, { N, r, p, maxmem: 256 * N * r });
  return { sealing, fileKey: derived.subarray(0, 32), manifestKey: derived.subarray(32) };
}

/** The manifest's seal: an HMAC over its JSON without the seal itself. */
export function manifestSeal(keys: BackupKeys, manifestWithoutSeal: object): string {
  return crypto.createHmac("sha256", keys.manifestKey).update(JSON.stringify(manifestWithoutSeal)).digest("hex");
}

export function sealMatches(keys: BackupKeys, manifestWithoutSeal: object, seal: unknown): boolean {
  const expected = Buffer.from(manifestSeal(keys, manifestWithoutSeal), "hex");
  const given = typeof seal === "string" && /^[0-9a-f]{64}$/.test(seal) ? Buffer.from(seal, "hex") : Buffer.alloc(0);
  return given.length === expected.length && crypto.timingSafeEqual(given, expected);
}

/** Writes `source` sealed to `target` (mode 0600): IV, ciphertext, tag. Streams: an index may be gigabytes. */
export async function sealFile(keys: BackupKeys, name: string, source: string, target: string): Promise<void> {
  const iv = crypto.randomBytes(IV_BYTES);
  const cipher = crypto.createCipheriv("aes-256-gcm", keys.fileKey, iv).setAAD(Buffer.from(name));
  const out = fs.createWriteStream(target, { mode: 0o600 });
  out.write(iv);
  await pipeline(fs.createReadStream(source), cipher, out, { end: false });
  await new Promise<void>((resolve, reject) => out.end(cipher.getAuthTag(), (error?: Error | null) => (error ? reject(error) : resolve())));
}

/**
 * Opens a sealed file into `target` (mode 0600). Throws, and leaves `target` to the caller to
 * remove, when the file was changed or belongs to another name or passphrase.
 */
export async function openSealedFile(keys: BackupKeys, name: string, source: string, target: string): Promise<void> {
  const size = fs.statSync(source).size;
  if (size < IV_BYTES + TAG_BYTES) throw new Error(`The backup is damaged: ${name} is too short to be a sealed file`);
  const iv = Buffer.alloc(IV_BYTES);
  const tag = Buffer.alloc(TAG_BYTES);
  const fd = fs.openSync(source, "r");
  try {
    fs.readSync(fd, iv, 0, IV_BYTES, 0);
    fs.readSync(fd, tag, 0, TAG_BYTES, size - TAG_BYTES);
  } finally {
    fs.closeSync(fd);
  }
  const decipher = crypto.createDecipheriv("aes-256-gcm", keys.fileKey, iv).setAAD(Buffer.from(name)).setAuthTag(tag);
  try {
    await pipeline(fs.createReadStream(source, { start: IV_BYTES, end: size - TAG_BYTES - 1 }), decipher, fs.createWriteStream(target, { mode: 0o600 }));
  } catch (error) {
    if ((error as Error).message.includes("authenticate")) throw new Error(`The backup was changed after it was written: ${name} does not match its seal`);
    throw error;
  }
}

/** SHA-256 of a file as stored, hex. */
export async function fileDigest(file: string): Promise<string> {
  const hash = crypto.createHash("sha256");
  for await (const chunk of fs.createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}
