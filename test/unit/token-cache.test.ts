import assert from "node:assert/strict";
import { afterEach, describe, it, mock } from "node:test";
import type { SecretStore } from "../../server/secrets/secrets";
import { TOKEN_LIFETIME_SECONDS, TokenService, VERIFIED_TOKENS_KEPT } from "../../server/accounts/tokens";
import { UnauthorizedError } from "../../server/errors";

// A verified token is remembered until its expiry: later requests skip the HMAC, and nothing else changes.

const noStore = {} as SecretStore;
const user = { id: "3f0c8a52-5d0e-4a8e-9f43-1c2b3d4e5f60", email: "ada@example.com" };

describe("TokenService verified-token cache", () => {
  afterEach(() => mock.timers.reset());

  it("answers a remembered token's actor, and still refuses it once expired", async () => {
    mock.timers.enable({ apis: ["Date"], now: Date.parse("2026-11-24T12:00:00Z") });
    const tokens = await TokenService.open(noStore, "a-fixed-secret-for-this-test-only-0123456789");
    const token = await tokens.issue(user);
    assert.deepEqual(await tokens.verify(token), { userId: user.id, email: user.email });
    const again = await tokens.verify(token);
    assert.deepEqual(again, { userId: user.id, email: user.email });
    again.userId = "changed by a caller";
    assert.equal((await tokens.verify(token)).userId, user.id, "a caller's change does not reach the cache");
    mock.timers.tick(TOKEN_LIFETIME_SECONDS * 1000 - 1000);
    assert.equal((await tokens.verify(token)).userId, user.id, "valid up to its exp");
    mock.timers.tick(1000);
    await assert.rejects(tokens.verify(token), (e: Error) => e instanceof UnauthorizedError && /Session expired/.test(e.message));
  });

  it("refuses a token that differs from a remembered one by a byte, and remembers no failure", async () => {
    const tokens = await TokenService.open(noStore, "a-fixed-secret-for-this-test-only-0123456789");
    const token = await tokens.issue(user);
    await tokens.verify(token);
    const [header, payload, signature] = token.split(".");
    const forged = `${header}.${payload}.${signature.slice(0, -2)}${signature.endsWith("AA") ? "BB" : "AA"}`;
    for (let i = 0; i < 2; i++) await assert.rejects(tokens.verify(forged), /Invalid access token/);
    const other = await TokenService.open(noStore, "another-secret-of-another-server-0123456789");
    await assert.rejects(other.verify(token), /Invalid access token/, "the cache is per signing key");
  });

  it("keeps a bounded number of tokens", async () => {
    const tokens = await TokenService.open(noStore, "a-fixed-secret-for-this-test-only-0123456789");
    const verified = (tokens as unknown as { verified: Map<string, unknown> }).verified;
    const first = await tokens.issue(user);
    await tokens.verify(first);
    for (let i = 0; i < VERIFIED_TOKENS_KEPT; i++) {
      const token = await tokens.issue({ id: user.id, email: `u${i}@example.com` });
      await tokens.verify(token);
    }
    assert.equal(verified.size, VERIFIED_TOKENS_KEPT);
    assert.equal(verified.has(first), false, "the oldest went first");
    assert.equal((await tokens.verify(first)).userId, user.id, "and verifies in full again");
  });
});
