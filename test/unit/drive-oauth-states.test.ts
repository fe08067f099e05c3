import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { OAuthStates, sameBrowserKey, sameOriginPath, STATE_LIFETIME_MS } from "../../server/connectors/gdrive/oauth-states";
import { FileSecretStore } from "../../server/secrets/secrets";
import { tempDir } from "../fixtures/sluice-server";

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
      // Dot segments that normalise into a scheme-relative URL (issue 15: Location: //evil.example).
      "/..//evil.example",
      "/../..//evil.example/x",
      "/a/../..//evil.example",
      "/.//evil.example",
      "/%2e%2e//evil.example",
    ]) {
      assert.equal(sameOriginPath(target, PUBLIC), null, target);
    }
  });
});

describe("OAuthStates", () => {
  // A user id long enough that the sealed state (random-looking base64url) cannot contain it by
  // chance: "u1" did, about once in twenty runs.
  const entry = { userId: "user-0b1f6c2e-sealed-state-test", codeVerifier: "v", returnTo: "/x", thisMachineOnly: false };

  it("a state opens to what was issued, with the browser key the starting browser keeps", async () => {
    const states = await OAuthStates.open(await FileSecretStore.open(tempDir()));
    const { state, browserKey } = await states.issue(entry);
    assert.deepEqual(await states.open(state), { ...entry, browserKey });
    assert.match(browserKey, /^[A-Za-z0-9_-]{43}$/);
    assert.ok(!state.includes(entry.userId) && !state.includes(browserKey), "the state is sealed, not just signed");
  });

  it("another process on the same secret store opens it; another store does not", async () => {
    const dir = tempDir();
    const { state } = await (await OAuthStates.open(await FileSecretStore.open(dir))).issue(entry);
    assert.equal((await (await OAuthStates.open(await FileSecretStore.open(dir))).open(state))?.userId, entry.userId);
    assert.equal(await (await OAuthStates.open(await FileSecretStore.open(tempDir()))).open(state), null);
  });

  it("an expired, tampered or unknown state does not open", async () => {
    const states = await OAuthStates.open(await FileSecretStore.open(tempDir()));
    const now = Date.now();
    const { state } = await states.issue(entry, now);
    assert.notEqual(await states.open(state, now + STATE_LIFETIME_MS - 1000), null);
    assert.equal(await states.open(state, now + STATE_LIFETIME_MS + 1000), null);
    const parts = state.split(".");
    parts[3] = parts[3].slice(0, -2) + (parts[3].endsWith("AA") ? "BB" : "AA");
    assert.equal(await states.open(parts.join(".")), null);
    assert.equal(await states.open("nope"), null);
  });

  it("the browser key must match exactly", () => {
    assert.equal(sameBrowserKey("abc", "abc"), true);
    assert.equal(sameBrowserKey(undefined, "abc"), false);
    assert.equal(sameBrowserKey("", "abc"), false);
    assert.equal(sameBrowserKey("abd", "abc"), false);
    assert.equal(sameBrowserKey("abcd", "abc"), false);
  });
});
