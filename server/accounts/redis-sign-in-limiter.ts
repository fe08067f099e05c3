import crypto from "node:crypto";
import { TooManyRequestsError } from "../errors";
import type { RedisClient } from "../redis/redis-client";
import { DEFAULT_SIGN_IN_LIMITS, type SignInGuard, type SignInLimits } from "./sign-in-limiter";

/**
 * The sign-in limiter of team mode: the same sliding window as SignInLimiter, kept in Redis
 * (a sorted set of failure times per key) so every API process counts the same failures.
 */
export class RedisSignInLimiter implements SignInGuard {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly limits: SignInLimits = DEFAULT_SIGN_IN_LIMITS,
  ) {}

  async assertAllowed(ip: string, email: string): Promise<void> {
    const now = Date.now();
    for (const key of this.keys(ip, email)) {
      await this.redis.call("ZREMRANGEBYSCORE", key, "-inf", now - this.limits.windowMs);
      const count = Number(await this.redis.zcard(key));
      if (count >= this.limits.maxFailures) {
        const oldest = Number((await this.redis.zrange(key, 0, 0, { WITHSCORES: true }))[1]);
        const retryAfter = Math.max(1, Math.ceil((oldest + this.limits.windowMs - now) / 1000));
        throw new TooManyRequestsError(`Too many failed sign-in attempts; try again in ${retryAfter} seconds`, retryAfter);
      }
    }
  }

  async recordFailure(ip: string, email: string): Promise<void> {
    const now = Date.now();
    for (const key of this.keys(ip, email)) {
      await this.redis.call("ZADD", key, now, `${now}:${crypto.randomUUID()}`);
      await this.redis.call("PEXPIRE", key, this.limits.windowMs);
    }
  }

  async recordSuccess(email: string): Promise<void> {
    await this.redis.del(`${this.prefix}:sign-in:account:${email.toLowerCase()}`);
  }

  private keys(ip: string, email: string): string[] {
    return [`${this.prefix}:sign-in:ip:${ip}`, `${this.prefix}:sign-in:account:${email.toLowerCase()}`];
  }
}
