import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SignInLimiter } from "../../server/accounts/sign-in-limiter";
import { TooManyRequestsError } from "../../server/errors";

describe("SignInLimiter", () => {
  it("blocks an account after maxFailures within the window and lets it go once they age out", () => {
    let now = 0;
    const limiter = new SignInLimiter({ maxFailures: 3, windowMs: 60_000 }, () => now);
    for (let i = 0; i < 3; i++) {
      limiter.assertAllowed(`10.0.0.${i}`, "a@x.com");
      limiter.recordFailure(`10.0.0.${i}`, "a@x.com");
      now += 1000;
    }
    assert.throws(() => limiter.assertAllowed("10.0.0.9", "A@X.com"), (e: unknown) => {
      assert.ok(e instanceof TooManyRequestsError);
      assert.equal(e.retryAfterSeconds, 57);
      return true;
    });
    now = 60_001;
    assert.doesNotThrow(() => limiter.assertAllowed("10.0.0.9", "a@x.com"));
  });

  it("blocks an IP across accounts, and a success clears only the account's count", () => {
    const limiter = new SignInLimiter({ maxFailures: 2, windowMs: 60_000 }, () => 0);
    limiter.recordFailure("1.1.1.1", "a@x.com");
    limiter.recordSuccess("a@x.com");
    limiter.recordFailure("1.1.1.1", "b@x.com");
    assert.throws(() => limiter.assertAllowed("1.1.1.1", "c@x.com"), TooManyRequestsError);
    assert.doesNotThrow(() => limiter.assertAllowed("2.2.2.2", "a@x.com"));
  });
});
