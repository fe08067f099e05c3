import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MemoryAttemptStore } from "../../server/accounts/attempt-store";
import { DEFAULT_ACCOUNT_LIMITS, SignInLimiter } from "../../server/accounts/sign-in-limiter";
import { TooManyRequestsError } from "../../server/errors";

function limiterAt(clock: { now: number }) {
  return new SignInLimiter(new MemoryAttemptStore(() => clock.now));
}

async function refused(attempt: Promise<unknown>): Promise<TooManyRequestsError> {
  try {
    await attempt;
  } catch (error) {
    assert.ok(error instanceof TooManyRequestsError, String(error));
    return error;
  }
  assert.fail("expected a 429");
}

describe("SignInLimiter (in memory)", () => {
  it("per account and address: 10 attempts a minute, then 429 with the wait; the owner elsewhere is not locked out", async () => {
    const clock = { now: 0 };
    const limiter = limiterAt(clock);
    for (let i = 0; i < 10; i++) {
      await limiter.reserveSignIn("10.0.0.1", "a@x.com");
      clock.now += 1000;
    }
    const error = await refused(limiter.reserveSignIn("10.0.0.1", "A@X.com"));
    assert.equal(error.retryAfterSeconds, 50, "until the first attempt leaves the 60 s window");
    assert.match(error.detail, /Too many failed sign-in attempts; try again in 50 seconds \(after \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\)/);
    await limiter.reserveSignIn("10.0.0.2", "a@x.com");
    clock.now = 60_001;
    await limiter.reserveSignIn("10.0.0.1", "a@x.com");
  });

  it("reserves before answering: of 200 concurrent attempts exactly the limit get through", async () => {
    const limiter = limiterAt({ now: 0 });
    const one = await Promise.allSettled(Array.from({ length: 200 }, () => limiter.reserveSignIn("10.0.0.1", "a@x.com")));
    assert.equal(one.filter((r) => r.status === "fulfilled").length, 10);
    const many = await Promise.allSettled(Array.from({ length: 300 }, (_, i) => limiter.reserveSignIn("10.0.0.2", `u${i}@x.com`)));
    assert.equal(many.filter((r) => r.status === "fulfilled").length, DEFAULT_ACCOUNT_LIMITS.perAddress.limit);
  });

  it("per address: 20 attempts a minute across accounts", async () => {
    const limiter = limiterAt({ now: 0 });
    for (let i = 0; i < 20; i++) await limiter.reserveSignIn("10.0.0.1", `u${i}@x.com`);
    await refused(limiter.reserveSignIn("10.0.0.1", "fresh@x.com"));
    await limiter.reserveSignIn("10.0.0.2", "fresh@x.com");
  });

  it("per account: past 100 attempts in 15 minutes each address gets one try a minute, so a fresh address still gets in", async () => {
    const clock = { now: 0 };
    const limiter = limiterAt(clock);
    for (let a = 0; a < 10; a++) for (let i = 0; i < 10; i++) await limiter.reserveSignIn(`10.0.1.${a}`, "a@x.com");
    const first = await limiter.reserveSignIn("10.0.2.1", "a@x.com");
    const second = await refused(limiter.reserveSignIn("10.0.2.1", "a@x.com"));
    assert.equal(second.retryAfterSeconds, 60);
    clock.now += 60_001;
    await limiter.reserveSignIn("10.0.2.1", "a@x.com");
    await refused(limiter.reserveSignIn("10.0.2.1", "a@x.com"));
    // A success from that address clears its own count there; the account's count stays (it may be an attacker's).
    await limiter.signInSucceeded(first);
    await limiter.reserveSignIn("10.0.2.2", "a@x.com");
    await refused(limiter.reserveSignIn("10.0.2.2", "a@x.com"));
    // The ceiling's window passes: back to 10 per address.
    clock.now += 15 * 60_000;
    for (let i = 0; i < 10; i++) await limiter.reserveSignIn("10.0.2.2", "a@x.com");
  });

  it("a success takes its own attempt back and forgives the pair's failures, but not the address's", async () => {
    const limiter = limiterAt({ now: 0 });
    for (let i = 0; i < 9; i++) await limiter.reserveSignIn("10.0.0.1", "a@x.com");
    await limiter.signInSucceeded(await limiter.reserveSignIn("10.0.0.1", "a@x.com"));
    for (let i = 0; i < 10; i++) await limiter.reserveSignIn("10.0.0.1", "a@x.com");
    await refused(limiter.reserveSignIn("10.0.0.1", "a@x.com"));
    // 19 of the address's 20 are spent (9 + 10; the success took its own back).
    await limiter.reserveSignIn("10.0.0.1", "b@x.com");
    await refused(limiter.reserveSignIn("10.0.0.1", "c@x.com"));
  });

  it("sign-up: 20 attempts an hour per address, none counted when the limit is off", async () => {
    const clock = { now: 0 };
    const limiter = limiterAt(clock);
    for (let i = 0; i < 20; i++) await limiter.reserveSignUp("10.0.0.1");
    const error = await refused(limiter.reserveSignUp("10.0.0.1"));
    assert.equal(error.retryAfterSeconds, 3600);
    assert.match(error.detail, /Too many sign-ups from this address; try again in 3600 seconds/);
    await limiter.reserveSignUp("10.0.0.2");
    const off = new SignInLimiter(new MemoryAttemptStore(), { ...DEFAULT_ACCOUNT_LIMITS, signUpsPerAddress: { limit: null, windowMs: 1 } });
    for (let i = 0; i < 50; i++) await off.reserveSignUp("10.0.0.1");
  });
});
