import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { GOOD_PASSWORD, signUp, uniqueEmail } from "../fixtures/http-client";
import { useSluice } from "../fixtures/use-sluice";

// Each rule gets its own server: the limits are per client IP, and every test comes from 127.0.0.1.
describe("sign-in rate limit", () => {
  const { request } = useSluice();

  it("per account: after 10 failures in a minute even the right password answers 429 with detail and Retry-After", async () => {
    const { email } = await signUp(request);
    for (let i = 0; i < 10; i++) {
      assert.equal((await request("POST", "/signin", { body: { email, password: `wrong-${i}-x1` } })).status, 401);
    }
    const blocked = await request("POST", "/signin", { body: { email, password: GOOD_PASSWORD } });
    assert.equal(blocked.status, 429);
    assert.match(blocked.body.detail, /Too many failed sign-in attempts/);
    assert.ok(Number(blocked.headers.get("retry-after")) > 0);
  });
});

describe("sign-in rate limit per IP", () => {
  const { request } = useSluice();

  it("10 failures across different accounts from one IP block further sign-ins from it", async () => {
    const victim = await signUp(request);
    for (let i = 0; i < 10; i++) {
      assert.equal((await request("POST", "/signin", { body: { email: uniqueEmail(), password: GOOD_PASSWORD } })).status, 401);
    }
    const res = await request("POST", "/signin", { body: { email: victim.email, password: GOOD_PASSWORD } });
    assert.equal(res.status, 429);
    // Sign-up and already-issued tokens are not affected.
    assert.equal((await request("GET", "/users/me", { token: victim.token })).status, 200);
  });
});
