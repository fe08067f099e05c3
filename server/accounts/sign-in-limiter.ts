import crypto from "node:crypto";
import { TooManyRequestsError } from "../errors";
import { addressKey } from "./address-key";
import { MemoryAttemptStore, type AttemptRule, type AttemptStore } from "./attempt-store";

/** The limits on sign-in and sign-up (docs/decisions/0018-sign-in-limit-values.md). */
export interface AccountLimits {
  /** Attempts at one account from one address: the attacker's own budget, never the owner's elsewhere. */
  perAccountAndAddress: { limit: number; windowMs: number };
  /** Attempts from one address at any accounts (one address trying many accounts). */
  perAddress: { limit: number; windowMs: number };
  /**
   * Attempts at one account from anywhere. Reaching the ceiling refuses no one outright: it
   * tightens every address's budget at that account to `perAddressOver`, so an attacker with many
   * addresses is slowed while the owner, from an address of their own, still gets a try.
   */
  perAccount: { ceiling: number; windowMs: number; perAddressOver: number };
  /** Sign-up attempts from one address; null: no limit. */
  signUpsPerAddress: { limit: number | null; windowMs: number };
  /** Sign-in attempts from every address together (a cap many addresses cannot get around); null: no limit. */
  everyone: { limit: number | null; windowMs: number };
}

export const DEFAULT_ACCOUNT_LIMITS: AccountLimits = {
  perAccountAndAddress: { limit: 10, windowMs: 60_000 },
  perAddress: { limit: 20, windowMs: 60_000 },
  perAccount: { ceiling: 100, windowMs: 15 * 60_000, perAddressOver: 1 },
  signUpsPerAddress: { limit: 20, windowMs: 60 * 60_000 },
  everyone: { limit: 300, windowMs: 60_000 },
};

/** A password check reserved by reserveSignIn: kept as a failure unless released by signInSucceeded. */
export interface SignInReservation {
  pairKey: string;
  sharedKeys: string[];
  member: string;
}

/**
 * Sign-in and sign-up limits. An attempt is reserved (counted) before the slow password work,
 * in one atomic step with the check, so concurrent requests cannot all pass a check made before
 * any of them is counted. A refused attempt answers 429 with Retry-After and a detail saying when.
 */
export class SignInLimiter {
  constructor(
    private readonly store: AttemptStore = new MemoryAttemptStore(),
    private readonly limits: AccountLimits = DEFAULT_ACCOUNT_LIMITS,
  ) {}

  /** Counts this attempt for (address, account), or throws TooManyRequestsError; call before comparing the password. */
  async reserveSignIn(ip: string, email: string): Promise<SignInReservation> {
    const account = email.trim().toLowerCase();
    const address = addressKey(ip);
    const { perAccountAndAddress: pair, perAddress, perAccount, everyone } = this.limits;
    const rules: AttemptRule[] = [
      { key: `sign-in:account:${account}`, windowMs: perAccount.windowMs, limit: null },
      {
        key: `sign-in:pair:${address}|${account}`,
        windowMs: pair.windowMs,
        limit: pair.limit,
        tighten: { whenRule: 0, atLeast: perAccount.ceiling, limit: perAccount.perAddressOver },
      },
      { key: `sign-in:ip:${address}`, windowMs: perAddress.windowMs, limit: perAddress.limit },
      { key: "sign-in:everyone", windowMs: everyone.windowMs, limit: everyone.limit },
    ];
    const member = crypto.randomUUID();
    const waitMs = await this.store.reserve(rules, member);
    if (waitMs > 0) throw tooMany("Too many failed sign-in attempts", waitMs);
    return { pairKey: rules[1].key, sharedKeys: [rules[0].key, rules[2].key, rules[3].key], member };
  }

  /**
   * The password was right: this attempt no longer counts anywhere, and the owner's earlier typos
   * from this address are forgiven. The account's and the address's other failures stay: they may be an attacker's.
   */
  async signInSucceeded(reservation: SignInReservation): Promise<void> {
    await this.store.release(reservation.sharedKeys, reservation.member);
    await this.store.clear(reservation.pairKey);
  }

  /** Counts a sign-up attempt from this address (created or not), or throws TooManyRequestsError. */
  async reserveSignUp(ip: string): Promise<void> {
    const { limit, windowMs } = this.limits.signUpsPerAddress;
    if (limit === null) return;
    const waitMs = await this.store.reserve([{ key: `sign-up:ip:${addressKey(ip)}`, windowMs, limit }], crypto.randomUUID());
    if (waitMs > 0) throw tooMany("Too many sign-ups from this address", waitMs);
  }
}

function tooMany(what: string, waitMs: number): TooManyRequestsError {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  const at = new Date(Date.now() + seconds * 1000).toISOString().slice(0, 19).replace("T", " ");
  return new TooManyRequestsError(`${what}; try again in ${seconds} seconds (after ${at} UTC)`, seconds);
}
