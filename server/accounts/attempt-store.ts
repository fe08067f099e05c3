/**
 * Counting attempts against limits, atomically: a check and its count are one step, so
 * however many requests arrive at once, no more than a rule's limit ever get past it per
 * window (docs/decisions/0017-sign-in-attempts-reserved-atomically.md).
 */

/** One sliding-window limit on one counter. */
export interface AttemptRule {
  key: string;
  windowMs: number;
  /** Attempts allowed within the window; null counts without ever refusing. */
  limit: number | null;
  /** A tighter limit for this rule while another rule's counter (by index) holds at least `atLeast`. */
  tighten?: { whenRule: number; atLeast: number; limit: number };
}

/** Where attempts are counted: in this process (desktop), or in Redis (team server, shared by every process). */
export interface AttemptStore {
  /**
   * Records one attempt under every rule's key and answers 0, or, when any rule is at its
   * limit, records nothing and answers how many ms until every refusing rule has room again.
   * `member` names this attempt so it can be released.
   */
  reserve(rules: AttemptRule[], member: string): Promise<number>;
  /** Takes one reserved attempt back out of these keys. */
  release(keys: string[], member: string): Promise<void>;
  /** Forgets every attempt under a key. */
  clear(key: string): Promise<void>;
}

/** Refuses when the counter is at the rule's (possibly tightened) limit: the wait until enough entries age out, else 0. */
function waitFor(rule: AttemptRule, times: number[], counts: number[], now: number): number {
  let limit = rule.limit;
  if (rule.tighten && counts[rule.tighten.whenRule] >= rule.tighten.atLeast) limit = rule.tighten.limit;
  if (limit === null || times.length < limit) return 0;
  // With n entries and room for `limit`, the (n - limit + 1) oldest must leave: the one at index n - limit is the last of them.
  const deciding = times[times.length - limit];
  return deciding === undefined ? rule.windowMs : deciding + rule.windowMs - now;
}

/** The desktop's store: one process, so a synchronous check-and-record is atomic (nothing runs between them). */
export class MemoryAttemptStore implements AttemptStore {
  /** Per key: its window and its attempts (ascending times, with their members). */
  private readonly attempts = new Map<string, { windowMs: number; entries: Array<{ at: number; member: string }> }>();

  constructor(
    private readonly now: () => number = Date.now,
    /** Above this many keys, empty ones are dropped, so a flood of made-up emails cannot grow memory without end. */
    private readonly pruneAbove = 10_000,
  ) {}

  reserve(rules: AttemptRule[], member: string): Promise<number> {
    return Promise.resolve(this.reserveNow(rules, member));
  }

  /** The synchronous core of reserve. */
  reserveNow(rules: AttemptRule[], member: string): number {
    const now = this.now();
    const entries = rules.map((rule) => this.recent(rule.key, rule.windowMs, now));
    const counts = entries.map((list) => list.length);
    const wait = Math.max(0, ...rules.map((rule, i) => waitFor(rule, entries[i].map((e) => e.at), counts, now)));
    if (wait > 0) return wait;
    rules.forEach((rule, i) => {
      this.attempts.set(rule.key, { windowMs: rule.windowMs, entries: [...entries[i], { at: now, member }] });
    });
    if (this.attempts.size > this.pruneAbove) this.prune(now);
    return 0;
  }

  release(keys: string[], member: string): Promise<void> {
    for (const key of keys) {
      const counter = this.attempts.get(key);
      if (!counter) continue;
      counter.entries = counter.entries.filter((e) => e.member !== member);
      if (counter.entries.length === 0) this.attempts.delete(key);
    }
    return Promise.resolve();
  }

  clear(key: string): Promise<void> {
    this.attempts.delete(key);
    return Promise.resolve();
  }

  private recent(key: string, windowMs: number, now: number): Array<{ at: number; member: string }> {
    return (this.attempts.get(key)?.entries ?? []).filter((e) => e.at > now - windowMs);
  }

  private prune(now: number): void {
    for (const [key, { windowMs, entries }] of this.attempts) {
      if (!entries.some((e) => e.at > now - windowMs)) this.attempts.delete(key);
    }
  }
}
