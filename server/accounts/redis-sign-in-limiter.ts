import crypto from "node:crypto";
import { TooManyRequestsError } from "../errors";
import type { Redis } from "ioredis";
import { DEFAULT_SIGN_IN_LIMITS, type SignInGuard, type SignInLimits } from "./sign-in-limiter";

/**
 * The sign-in limiter of team mode: the same sliding window as SignInLimiter, kept in Redis
 * (a sorted set of failure times per key) so every API process counts the same failures.
 */
export class RedisSignInLimiter implements SignInGuard {
  constructor(
    /** The process's shared connection (openRedis): a command fails after its timeout while Redis is unreachable. */
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly limits: SignInLimits = DEFAULT_SIGN_IN_LIMITS,
  ) {}

  async assertAllowed(ip: string, email: string): Promise<void> {
    const now = Date.now();
    for (const key of this.keys(ip, email)) {
      await this.redis.zremrangebyscore(key, "-inf", now - this.limits.windowMs);
      const count = await this.redis.zcard(key);
      if (count >= this.limits.maxFailures) {
        const oldest = Number((await this.redis.zrange(key, 0, 0, "WITHSCORES"))[1]);
        const retryAfter = Math.max(1, Math.ceil((oldest + this.limits.windowMs - now) / 1000));
        throw new TooManyRequestsError(`Too many failed sign-in attempts; try again in ${retryAfter} seconds`, retryAfter);
      }
    }
  }

  async recordFailure(ip: string, email: string): Promise<void> {
    const now = Date.now();
    for (const key of this.keys(ip, email)) {
      await this.redis.zadd(key, now, `${now}:${crypto.randomUUID()}`);
      await this.redis.pexpire(key, this.limits.windowMs);
    }
  }

  async recordSuccess(email: string): Promise<void> {
    await this.redis.del(`${this.prefix}:sign-in:account:${email.toLowerCase()}`);
  }

  private keys(ip: string, email: string): string[] {
    return [`${this.prefix}:sign-in:ip:${ip}`, `${this.prefix}:sign-in:account:${email.toLowerCase()}`];
  }
}
