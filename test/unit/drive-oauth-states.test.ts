import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { OAuthStates, sameOriginPath, STATE_LIFETIME_MS } from "../../server/connectors/gdrive/oauth-states";

const PUBLIC = "http://127.0.0.1:8420";

describe("sameOriginPath", () => {
  it("keeps paths on this server, normalised", () => {
    assert.equal(sameOriginPath("/", PUBLIC), "/");
    assert.equal(sameOriginPath("/settings/drive?tab=1#x", PUBLIC), "/settings/drive?tab=1#x");
    assert.equal(sameOriginPath("/a/../b", PUBLIC), "/b");
  });

  it("refuses anything that could leave this server", () => {
    for (const target of [
      "https://evil.example/",
      "http://127.0.0.1:8420/settings",
      "//evil.example",
      "/\\evil.example",
      "\\\\evil.example",
      "/\t/evil.example",
      "javascript:alert(1)",
      "settings",
      "",
    ]) {
      assert.equal(sameOriginPath(target, PUBLIC), null, target);
    }
  });
});

describe("OAuthStates", () => {
  const entry = { userId: "u1", codeVerifier: "v", returnTo: "/" };

  it("a state is taken once", () => {
    const states = new OAuthStates();
    const state = states.issue(entry);
    assert.deepEqual({ ...states.take(state), expiresAt: 0 }, { ...entry, expiresAt: 0 });
    assert.equal(states.take(state), null);
  });

  it("an unknown or expired state is refused", () => {
    const states = new OAuthStates();
    assert.equal(states.take("nope"), null);
    const now = Date.now();
    const state = states.issue(entry, now);
    assert.equal(states.take(state, now + STATE_LIFETIME_MS + 1), null);
  });

  it("states are unguessable and distinct", () => {
    const states = new OAuthStates();
    const a = states.issue(entry);
    const b = states.issue(entry);
    assert.notEqual(a, b);
    assert.match(a, /^[A-Za-z0-9_-]{43}$/);
  });
});
