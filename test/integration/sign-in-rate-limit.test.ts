import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { GOOD_PASSWORD, signUp, uniqueEmail, type ApiResponse, type Request } from "../fixtures/http-client";
import { useSluice } from "../fixtures/use-sluice";

// TRUST_PROXY=loopback: the tests (on 127.0.0.1) stand in for a reverse proxy, so X-Forwarded-For
// names the client address each attempt comes from. Each rule gets its own server, as limits are per address.
const BEHIND_PROXY = { TRUST_PROXY: "loopback" };

let nextAddress = 0;
/** A client address not used before in this test process. */
function freshAddress(): string {
  nextAddress += 1;
  return `10.${(process.pid >> 8) & 255}.${nextAddress >> 8}.${nextAddress & 255}`;
}

function signIn(request: Request, email: string, password: string, from: string): Promise<ApiResponse> {
  return request("POST", "/signin", { body: { email, password }, headers: { "x-forwarded-for": from } });
}

/** How many of the answers were real password checks (401) and how many were refused (429); nothing else may come back. */
function tally(answers: ApiResponse[]): { checked: number; refused: number } {
  const checked = answers.filter((r) => r.status === 401).length;
  const refused = answers.filter((r) => r.status === 429).length;
  assert.equal(checked + refused, answers.length, `unexpected statuses: ${[...new Set(answers.map((r) => r.status))]}`);
  return { checked, refused };
}

function assertTooMany(res: ApiResponse, what: RegExp): void {
  assert.equal(res.status, 429);
  assert.match(res.body.detail, what);
  const wait = Number(res.headers.get("retry-after"));
  assert.ok(wait > 0, "Retry-After");
  assert.match(res.body.detail, new RegExp(`try again in ${wait} seconds \\(after \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d UTC\\)`));
}

describe("sign-in limits under concurrency", () => {
  // These floods count the limiter's checks: the hashing queue (its own test: password-hashing.test.ts) is made long enough to hold them all.
  const { request } = useSluice({ env: { ...BEHIND_PROXY, PASSWORD_HASH_QUEUE: "1000" } });

  it("200 simultaneous wrong passwords for one account from one address: exactly 10 are checked; the owner from another address gets in", async () => {
    const { email } = await signUp(request);
    const attacker = freshAddress();
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => signIn(request, email, `wrong-${i}-x1`, attacker)));
    assert.deepEqual(tally(answers), { checked: 10, refused: 190 });
    assertTooMany(answers.find((r) => r.status === 429)!, /Too many failed sign-in attempts/);
    assert.equal((await signIn(request, email, GOOD_PASSWORD, attacker)).status, 429, "the right password too, from the attacker's address");
    assert.equal((await signIn(request, email, GOOD_PASSWORD, freshAddress())).status, 200, "the owner is not locked out");
  });

  it("300 simultaneous sign-ins from one address at different accounts: exactly 20 are checked", async () => {
    const from = freshAddress();
    const answers = await Promise.all(Array.from({ length: 300 }, () => signIn(request, uniqueEmail(), GOOD_PASSWORD, from)));
    assert.deepEqual(tally(answers), { checked: 20, refused: 280 });
    assertTooMany(answers.find((r) => r.status === 429)!, /Too many failed sign-in attempts/);
  });

  it("a flood from many addresses reaches the account's ceiling of 100; past it each address gets one try a minute, so the owner still signs in", async () => {
    const { email } = await signUp(request);
    const flood = (addresses: string[], each: number) =>
      Promise.all(addresses.flatMap((from) => Array.from({ length: each }, (_, i) => signIn(request, email, `wrong-${i}-x1`, from))));
    // 10 addresses x 12: each address's 10 a minute, 100 in all, which is the ceiling.
    assert.deepEqual(tally(await flood(Array.from({ length: 10 }, freshAddress), 12)), { checked: 100, refused: 20 });
    // 5 more addresses x 10 at once: one check each.
    const second = await flood(Array.from({ length: 5 }, freshAddress), 10);
    assert.deepEqual(tally(second), { checked: 5, refused: 45 });
    assertTooMany(second.find((r) => r.status === 429)!, /Too many failed sign-in attempts/);
    assert.equal((await signIn(request, email, GOOD_PASSWORD, freshAddress())).status, 200, "the owner, from an address of their own");
  });
});

describe("sign-in limit without TRUST_PROXY", () => {
  const { request } = useSluice();

  it("X-Forwarded-For is not believed: the socket's address counts, so a made-up header does not buy more attempts", async () => {
    const { email, token } = await signUp(request);
    for (let i = 0; i < 10; i++) assert.equal((await signIn(request, email, `wrong-${i}-x1`, freshAddress())).status, 401);
    assertTooMany(await signIn(request, email, GOOD_PASSWORD, freshAddress()), /Too many failed sign-in attempts/);
    // Already-issued tokens are not affected.
    assert.equal((await request("GET", "/users/me", { token })).status, 200);
  });
});

describe("sign-up limit per address", () => {
  // Blank: the default limit (the fixture raises it for the other suites).
  const { request } = useSluice({ env: { ...BEHIND_PROXY, SIGNUP_LIMIT_PER_HOUR: "" } });

  it("20 sign-ups an hour from one address (taken emails included), then 429; another address still signs up", async () => {
    const from = freshAddress();
    const signUpFrom = (address: string, email = uniqueEmail()) =>
      request("POST", "/signup", { body: { email, password: GOOD_PASSWORD }, headers: { "x-forwarded-for": address } });
    const first = uniqueEmail();
    assert.equal((await signUpFrom(from, first)).status, 201);
    assert.equal((await signUpFrom(from, first)).status, 409, "a taken email counts too (it answers whether an account exists)");
    const rest = await Promise.all(Array.from({ length: 30 }, () => signUpFrom(from)));
    assert.equal(rest.filter((r) => r.status === 201).length, 18);
    const refused = rest.filter((r) => r.status === 429);
    assert.equal(refused.length, 12);
    assertTooMany(refused[0], /Too many sign-ups from this address/);
    assert.ok(Number(refused[0].headers.get("retry-after")) > 3500, "the hour's window");
    assert.equal((await signUpFrom(freshAddress())).status, 201);
  });
});
