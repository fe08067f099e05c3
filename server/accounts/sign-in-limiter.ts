import { TooManyRequestsError } from "../errors";

export interface SignInLimits {
  maxFailures: number;
  windowMs: number;
}

/** What sign-in needs from a limiter: the in-memory one, or the one counting in Redis (team mode). */
export interface SignInGuard {
  assertAllowed(ip: string, email: string): void | Promise<void>;
  recordFailure(ip: string, email: string): void | Promise<void>;
  recordSuccess(email: string): void | Promise<void>;
}

export const DEFAULT_SIGN_IN_LIMITS: SignInLimits = { maxFailures: 10, windowMs: 60_000 };

/**
 * Counts failed sign-ins per client IP and per account over a sliding window.
 * Once either key reaches the limit, every sign-in for it answers 429 until the
 * oldest failure leaves the window, right password or not, so guessing stops.
 */
export class SignInLimiter implements SignInGuard {
  private readonly failures = new Map<string, number[]>();

  constructor(
    private readonly limits: SignInLimits = DEFAULT_SIGN_IN_LIMITS,
    private readonly now: () => number = Date.now,
  ) {}

  assertAllowed(ip: string, email: string): void {
    for (const key of this.keys(ip, email)) {
      const recent = this.recent(key);
      if (recent.length >= this.limits.maxFailures) {
        const retryAfter = Math.max(1, Math.ceil((recent[0] + this.limits.windowMs - this.now()) / 1000));
        throw new TooManyRequestsError(`Too many failed sign-in attempts; try again in ${retryAfter} seconds`, retryAfter);
      }
    }
  }

  recordFailure(ip: string, email: string): void {
    for (const key of this.keys(ip, email)) {
      const recent = this.recent(key);
      recent.push(this.now());
      this.failures.set(key, recent);
    }
    if (this.failures.size > 10_000) this.prune();
  }

  recordSuccess(email: string): void {
    this.failures.delete(`account:${email.toLowerCase()}`);
  }

  private keys(ip: string, email: string): string[] {
    return [`ip:${ip}`, `account:${email.toLowerCase()}`];
  }

  private recent(key: string): number[] {
    const cutoff = this.now() - this.limits.windowMs;
    return (this.failures.get(key) ?? []).filter((at) => at > cutoff);
  }

  private prune(): void {
    for (const key of [...this.failures.keys()]) {
      if (this.recent(key).length === 0) this.failures.delete(key);
    }
  }
}
