import type { Redis } from "ioredis";
import type { AttemptRule, AttemptStore } from "./attempt-store";

/**
 * One atomic step in Redis (a Lua script runs alone): prune each counter (a sorted set of
 * attempt times) to its window, check every rule, then record the attempt under every key or
 * answer the wait in ms. The same arithmetic as MemoryAttemptStore (attempt-store.ts: waitFor).
 * Time is Redis's own clock, so API processes on several machines count one window.
 * ARGV: member, then five per rule: window ms, limit (-1: none), tightening rule index (0: none), at least, tighter limit.
 */
const RESERVE_SCRIPT = `
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local member = ARGV[1]
local counts = {}
for i = 1, #KEYS do
  local window = tonumber(ARGV[2 + (i - 1) * 5])
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now - window)
  counts[i] = redis.call('ZCARD', KEYS[i])
end
local wait = 0
for i = 1, #KEYS do
  local base = 2 + (i - 1) * 5
  local window = tonumber(ARGV[base])
  local limit = tonumber(ARGV[base + 1])
  local when = tonumber(ARGV[base + 2])
  if when > 0 and counts[when] >= tonumber(ARGV[base + 3]) then limit = tonumber(ARGV[base + 4]) end
  if limit >= 0 and counts[i] >= limit then
    local deciding = redis.call('ZRANGE', KEYS[i], counts[i] - limit, counts[i] - limit, 'WITHSCORES')
    local ms = window
    if deciding[2] then ms = tonumber(deciding[2]) + window - now end
    if ms > wait then wait = ms end
  end
end
if wait > 0 then return wait end
for i = 1, #KEYS do
  redis.call('ZADD', KEYS[i], now, member)
  redis.call('PEXPIRE', KEYS[i], ARGV[2 + (i - 1) * 5])
end
return 0
`;

type WithReserve = Redis & { sluiceReserveAttempt(keyCount: number, ...keysAndArgs: Array<string | number>): Promise<number> };

/** Team mode: attempts counted in Redis, so the limits hold across every API process. */
export class RedisAttemptStore implements AttemptStore {
  private readonly redis: WithReserve;

  constructor(
    /** The process's shared connection (openRedis): a command fails after its timeout while Redis is unreachable. */
    redis: Redis,
    private readonly prefix: string,
  ) {
    // defineCommand sends EVALSHA, and the script itself only when Redis does not hold it yet.
    if (!("sluiceReserveAttempt" in redis)) redis.defineCommand("sluiceReserveAttempt", { lua: RESERVE_SCRIPT });
    this.redis = redis as WithReserve;
  }

  async reserve(rules: AttemptRule[], member: string): Promise<number> {
    const args = rules.flatMap((rule) => [
      rule.windowMs,
      rule.limit ?? -1,
      rule.tighten ? rule.tighten.whenRule + 1 : 0,
      rule.tighten?.atLeast ?? 0,
      rule.tighten?.limit ?? 0,
    ]);
    return Number(await this.redis.sluiceReserveAttempt(rules.length, ...rules.map((rule) => this.key(rule.key)), member, ...args));
  }

  async release(keys: string[], member: string): Promise<void> {
    const multi = this.redis.multi();
    for (const key of keys) multi.zrem(this.key(key), member);
    await multi.exec();
  }

  async clear(key: string): Promise<void> {
    await this.redis.del(this.key(key));
  }

  private key(key: string): string {
    return `${this.prefix}:attempts:${key}`;
  }
}
