import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, it } from "node:test";
import { GOOD_PASSWORD, signUp } from "../fixtures/http-client";
import { useSluice } from "../fixtures/use-sluice";

const sluice = useSluice();
const { request } = sluice;

/** `npm run rotate-jwt-secret`'s program, with the server's own storage settings. */
function rotate(extra: Record<string, string> = {}) {
  const { dataDir, databaseUrl } = sluice.server;
  const cli = path.resolve(__dirname, "..", "..", "server", "rotate-jwt-secret.js");
  const env: Record<string, string> = { PATH: process.env.PATH ?? "", DATA_DIR: dataDir, SLUICE_SECRETS: "file", ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}), ...extra };
  return spawnSync(process.execPath, [cli], { env, encoding: "utf8" });
}

describe("npm run rotate-jwt-secret", () => {
  it("replaces the signing secret: once the server restarts every session token is refused; API keys keep working", async () => {
    const { email, token } = await signUp(request);
    const { body: key } = await request("POST", "/users/me/api_keys", { token, body: { name: "survives" } });
    const result = rotate();
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout, /rotated the session signing secret: restart every Sluice server process/);
    assert.equal((await request("GET", "/users/me", { token })).status, 200, "a running server keeps the secret it loaded");
    await sluice.restart();
    const refused = await request("GET", "/users/me", { token });
    assert.equal(refused.status, 401);
    assert.equal((await request("GET", "/users/me", { token: key.key })).status, 200, "API keys are not signed with it");
    const again = await request("POST", "/signin", { body: { email, password: GOOD_PASSWORD } });
    assert.equal((await request("GET", "/users/me", { token: again.body.access_token })).status, 200);
  });

  it("refuses, changing nothing, when JWT_SECRET is set", async () => {
    const { token } = await signUp(request);
    const result = rotate({ JWT_SECRET: "x".repeat(40) });
    assert.equal(result.status, 1);
    assert.match(result.stderr, /JWT_SECRET is set/);
    await sluice.restart();
    assert.equal((await request("GET", "/users/me", { token })).status, 200);
  });
});
