import crypto from "node:crypto";
import bcrypt from "bcryptjs";

/**
 * Password hashing (docs/decisions/0015-password-prehash.md). bcrypt reads at most 72 bytes, so a longer
 * password would be cut silently; each password is first reduced with HMAC-SHA256 and written
 * in base64 (44 bytes, no NUL), and bcrypt hashes that. Such hashes carry PREHASHED in front,
 * so hashes made before (bcrypt over the password itself) are still recognised and checked.
 */
const BCRYPT_COST = 12;
const PREHASHED = "$sluice-hmac-sha256";
/** A fixed key, for domain separation: this pre-hash matches no plain SHA-256 of the password kept elsewhere. */
const PREHASH_KEY = "sluice password pre-hash v1";

/**
 * bcryptjs hashes on the main thread in small slices. Many checks at once (a flood of sign-ins)
 * would interleave their slices so that every event-loop turn grows long and everything else,
 * database connections included, starves; one at a time keeps each turn short, for the same total work.
 */
let queueTail: Promise<unknown> = Promise.resolve();
function oneAtATime<T>(work: () => Promise<T>): Promise<T> {
  const run = queueTail.then(work, work);
  queueTail = run.catch(() => undefined);
  return run;
}

function prehash(password: string): string {
  return crypto.createHmac("sha256", PREHASH_KEY).update(password, "utf8").digest("base64");
}

export async function hashPassword(password: string): Promise<string> {
  return PREHASHED + (await oneAtATime(() => bcrypt.hash(prehash(password), BCRYPT_COST)));
}

export interface PasswordCheck {
  ok: boolean;
  /** A right password whose hash is of the older kind (no pre-hash, or a lower cost): hash it again. */
  outdated: boolean;
}

export async function checkPassword(password: string, stored: string): Promise<PasswordCheck> {
  if (stored.startsWith(PREHASHED)) {
    const hash = stored.slice(PREHASHED.length);
    const ok = await oneAtATime(() => bcrypt.compare(prehash(password), hash));
    return { ok, outdated: ok && bcrypt.getRounds(hash) < BCRYPT_COST };
  }
  // A hash made before the pre-hash: bcrypt over the password itself (its first 72 bytes).
  const ok = await oneAtATime(() => bcrypt.compare(password, stored));
  return { ok, outdated: ok };
}

let dummy: Promise<string> | null = null;
/** Compared against when the email is unknown (or has no password), so every failure takes the same time. */
export function dummyHash(): Promise<string> {
  dummy ??= hashPassword(crypto.randomBytes(16).toString("hex"));
  return dummy;
}
