import crypto from "node:crypto";
import bcrypt from "bcryptjs";

/**
 * Password hashing (docs/decisions/0015-password-prehash.md). bcrypt reads at most 72 bytes, so a longer
 * password would be cut silently; each password is first reduced with HMAC-SHA256 and written
 * in base64 (44 bytes, no NUL), and bcrypt hashes that. Such hashes carry PREHASHED in front,
 * so hashes made before (bcrypt over the password itself) are still recognised and checked.
 * These functions block for bcrypt's whole work: they run only in the hashing threads
 * (password-hash.worker.ts, reached through password-hasher.ts).
 */
const BCRYPT_COST = 12;
const PREHASHED = "$sluice-hmac-sha256";
/** A fixed key, for domain separation: this pre-hash matches no plain SHA-256 of the password kept elsewhere. */
const PREHASH_KEY = "sluice password pre-hash v1";

/**
 * Compared against when the email is unknown (or has no password), so every failure takes the
 * same time: the hash of a random password made once and thrown away (nothing can match it).
 */
export const DUMMY_HASH = `${PREHASHED}$2b$12$KjwcEPPVmlPP3mkaV.GGWeioNxfZ4NPbRYFshy/fb5HBovLne17TK`;

function prehash(password: string): string {
  return crypto.createHmac("sha256", PREHASH_KEY).update(password, "utf8").digest("base64");
}

export function hashPasswordNow(password: string): string {
  return PREHASHED + bcrypt.hashSync(prehash(password), BCRYPT_COST);
}

export interface PasswordCheck {
  ok: boolean;
  /** A right password whose hash is of the older kind (no pre-hash, or a lower cost): hash it again. */
  outdated: boolean;
}

export function checkPasswordNow(password: string, stored: string): PasswordCheck {
  if (stored.startsWith(PREHASHED)) {
    const hash = stored.slice(PREHASHED.length);
    const ok = bcrypt.compareSync(prehash(password), hash);
    return { ok, outdated: ok && bcrypt.getRounds(hash) < BCRYPT_COST };
  }
  // A hash made before the pre-hash: bcrypt over the password itself (its first 72 bytes).
  const ok = bcrypt.compareSync(password, stored);
  return { ok, outdated: ok };
}
