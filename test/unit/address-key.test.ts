import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { addressKey } from "../../server/accounts/address-key";
import { MemoryAttemptStore } from "../../server/accounts/attempt-store";
import { DEFAULT_ACCOUNT_LIMITS, SignInLimiter } from "../../server/accounts/sign-in-limiter";
import { TooManyRequestsError } from "../../server/errors";

describe("addressKey", () => {
  it("keeps IPv4 as it is and counts IPv6 by its /64, in any spelling", () => {
    assert.equal(addressKey("192.0.2.7"), "192.0.2.7");
    assert.equal(addressKey("2001:db8:1:2:aaaa::1"), "2001:db8:1:2::/64");
    assert.equal(addressKey("2001:0DB8:0001:0002:ffff:ffff:ffff:ffff"), "2001:db8:1:2::/64");
    assert.equal(addressKey("2001:db8::1"), "2001:db8:0:0::/64");
    assert.equal(addressKey("::1"), "0:0:0:0::/64");
    assert.equal(addressKey("fe80::1%eth0"), "fe80:0:0:0::/64");
    assert.equal(addressKey("::ffff:192.0.2.7"), "192.0.2.7", "an IPv4-mapped address is its IPv4 address");
    assert.equal(addressKey("unknown"), "unknown");
  });
});

describe("SignInLimiter by network and for everyone", () => {
  it("addresses of one IPv6 /64 share one budget; another /64 has its own", async () => {
    const limiter = new SignInLimiter(new MemoryAttemptStore(), DEFAULT_ACCOUNT_LIMITS);
    const limit = DEFAULT_ACCOUNT_LIMITS.perAddress.limit;
    for (let i = 0; i < limit; i++) await limiter.reserveSignIn(`2001:db8:1:2::${(i + 1).toString(16)}`, `u${i}@example.com`);
    await assert.rejects(limiter.reserveSignIn("2001:db8:1:2:ffff::9", "another@example.com"), TooManyRequestsError);
    await limiter.reserveSignIn("2001:db8:1:3::1", "another@example.com");
  });

  it("the global cap refuses every address once reached, and a success gives its place back", async () => {
    const limiter = new SignInLimiter(new MemoryAttemptStore(), { ...DEFAULT_ACCOUNT_LIMITS, everyone: { limit: 3, windowMs: 60_000 } });
    const first = await limiter.reserveSignIn("192.0.2.1", "a@example.com");
    await limiter.reserveSignIn("192.0.2.2", "b@example.com");
    await limiter.reserveSignIn("192.0.2.3", "c@example.com");
    await assert.rejects(limiter.reserveSignIn("198.51.100.4", "d@example.com"), /Too many failed sign-in attempts/);
    await limiter.signInSucceeded(first);
    await limiter.reserveSignIn("198.51.100.4", "d@example.com");
  });

  it("sign-ups from one IPv6 /64 share one budget", async () => {
    const limiter = new SignInLimiter(new MemoryAttemptStore(), { ...DEFAULT_ACCOUNT_LIMITS, signUpsPerAddress: { limit: 2, windowMs: 60_000 } });
    await limiter.reserveSignUp("2001:db8::1");
    await limiter.reserveSignUp("2001:db8::2");
    await assert.rejects(limiter.reserveSignUp("2001:db8::3"), TooManyRequestsError);
  });
});
