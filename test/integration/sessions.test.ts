import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createGroup, GOOD_PASSWORD, signUp, uniqueEmail } from "../fixtures/http-client";
import { useSluice } from "../fixtures/use-sluice";

const ADMIN = `admin-sessions-${process.pid}@example.com`;
const sluice = useSluice({ env: { ADMIN_EMAILS: ADMIN } });
const { request } = sluice;

const NEW_PASSWORD = "a-new-password-8";
const cookie = (token: string) => ({ cookie: `access_token=${token}` });

/** Two sessions of one account: one by bearer token, one by cookie. */
async function twoSessions(email: string, password = GOOD_PASSWORD) {
  const one = await request("POST", "/signin", { body: { email, password } });
  const two = await request("POST", "/signin", { body: { email, password } });
  assert.equal(one.status, 200);
  assert.equal(two.status, 200);
  return { bearer: one.body.access_token as string, cookieToken: two.body.access_token as string };
}

describe("PUT /users/me/password", () => {
  it("changes the password and signs out every other session, by token and by cookie; this one gets a new token", async () => {
    const { email, token } = await signUp(request);
    const others = await twoSessions(email);
    const key = await request("POST", "/users/me/api_keys", { token, body: { name: "stays" } });
    const res = await request("PUT", "/users/me/password", { token, body: { current_password: GOOD_PASSWORD, new_password: NEW_PASSWORD } });
    assert.equal(res.status, 200);
    assert.equal(res.body.token_type, "bearer");
    assert.match(res.headers.get("set-cookie") ?? "", new RegExp(`^access_token=${res.body.access_token};`));
    assert.equal((await request("GET", "/users/me", { token: res.body.access_token })).status, 200, "the new token works");
    for (const [name, options] of [
      ["the caller's old token", { token }],
      ["another bearer session", { token: others.bearer }],
      ["a cookie session", { headers: cookie(others.cookieToken) }],
    ] as const) {
      const refused = await request("GET", "/users/me", options);
      assert.equal(refused.status, 401, name);
      assert.match(refused.body.detail, /signed out: sign in again/, name);
    }
    assert.equal((await request("GET", "/users/me", { token: key.body.key })).status, 200, "API keys are not sessions: they stay");
    assert.equal((await request("POST", "/signin", { body: { email, password: GOOD_PASSWORD } })).status, 401, "the old password is gone");
    const again = await request("POST", "/signin", { body: { email, password: NEW_PASSWORD } });
    assert.equal(again.status, 200);
    assert.equal((await request("GET", "/users/me", { token: again.body.access_token })).status, 200, "a new sign-in works");
  });

  it("a wrong current password is a 403 and changes nothing; a weak new one is a 422", async () => {
    const { email, token } = await signUp(request);
    const wrong = await request("PUT", "/users/me/password", { token, body: { current_password: "wrong-password-1", new_password: NEW_PASSWORD } });
    assert.equal(wrong.status, 403);
    assert.match(wrong.body.detail, /current password/);
    const weak = await request("PUT", "/users/me/password", { token, body: { current_password: GOOD_PASSWORD, new_password: "short1" } });
    assert.equal(weak.status, 422);
    assert.equal(weak.body.errors[0].field, "new_password");
    const missing = await request("PUT", "/users/me/password", { token, body: { new_password: NEW_PASSWORD } });
    assert.equal(missing.status, 422);
    assert.equal(missing.body.errors[0].field, "current_password");
    assert.equal((await request("GET", "/users/me", { token })).status, 200, "the session goes on");
    assert.equal((await request("POST", "/signin", { body: { email, password: GOOD_PASSWORD } })).status, 200, "the password is unchanged");
    assert.equal((await request("PUT", "/users/me/password", { body: { current_password: GOOD_PASSWORD, new_password: NEW_PASSWORD } })).status, 401);
  });
});

describe("POST /signout?everywhere=true", () => {
  it("ends every session of the account, this one included, and clears the cookie; a plain sign-out ends none", async () => {
    const { email, token } = await signUp(request);
    const others = await twoSessions(email);
    const plain = await request("POST", "/signout", { token: others.bearer });
    assert.deepEqual(plain.body, { signed_out: true, everywhere: false });
    assert.equal((await request("GET", "/users/me", { token: others.bearer })).status, 200, "a plain sign-out revokes no token");

    const res = await request("POST", "/signout?everywhere=true", { headers: cookie(others.cookieToken) });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { signed_out: true, everywhere: true });
    assert.match(res.headers.get("set-cookie") ?? "", /access_token=;/);
    for (const options of [{ token }, { token: others.bearer }, { headers: cookie(others.cookieToken) }]) {
      assert.equal((await request("GET", "/users/me", options)).status, 401);
    }
    const back = await request("POST", "/signin", { body: { email, password: GOOD_PASSWORD } });
    assert.equal((await request("GET", "/users/me", { token: back.body.access_token })).status, 200, "signing in again works");
    assert.equal((await request("POST", "/signout?everywhere=yes", { token: back.body.access_token })).status, 422);
  });
});

describe("account deletion", () => {
  it("DELETE /users/me: groups stay with their other members, a group left empty goes, API keys and tokens stop working", async () => {
    const leaving = await signUp(request);
    const staying = await signUp(request);
    const shared = await createGroup(request, leaving.token, "shared");
    const alone = await createGroup(request, leaving.token, "alone");
    assert.equal((await request("PUT", `/user_groups/${shared}/members/${staying.email}`, { token: leaving.token })).status, 204);
    const collection = await request("POST", "/collections", { token: leaving.token, body: { name: `kept_${Date.now()}`, owner_group_id: shared } });
    const key = await request("POST", "/users/me/api_keys", { token: leaving.token, body: { name: "goes" } });

    const res = await request("DELETE", "/users/me", { token: leaving.token });
    assert.equal(res.status, 204);
    assert.match(res.headers.get("set-cookie") ?? "", /access_token=;/);
    assert.equal((await request("GET", "/users/me", { token: leaving.token })).status, 401);
    assert.equal((await request("GET", "/users/me", { token: key.body.key })).status, 401);
    assert.equal((await request("POST", "/signin", { body: { email: leaving.email, password: GOOD_PASSWORD } })).status, 401);
    const groups = (await request("GET", "/user_groups", { token: staying.token })).body as Array<{ id: string; members?: string[] }>;
    assert.ok(groups.some((g) => g.id === shared), "the shared group stays");
    assert.equal(groups.some((g) => g.id === alone), false, "the group only the account was in, owning nothing, goes");
    const collections = (await request("GET", "/collections", { token: staying.token })).body as Array<{ id: string }>;
    assert.ok(collections.some((c) => c.id === collection.body.id), "the shared group's collection stays");
    const users = (await request("GET", "/users", { token: staying.token })).body as Array<{ email: string }>;
    assert.equal(users.some((u) => u.email === leaving.email), false);
  });

  it("409 while the account alone holds a group that owns a collection, naming it; nothing is deleted", async () => {
    const owner = await signUp(request);
    const group = await createGroup(request, owner.token, "owns");
    await request("POST", "/collections", { token: owner.token, body: { name: `blocks_${Date.now()}`, owner_group_id: group } });
    const res = await request("DELETE", "/users/me", { token: owner.token });
    assert.equal(res.status, 409);
    assert.match(res.body.detail, /only member of groups that own/);
    assert.match(res.body.detail, /owns-/);
    assert.equal((await request("GET", "/users/me", { token: owner.token })).status, 200);
  });

  it("DELETE /users/{id}: an administrator may delete anyone, others only themselves (another's id answers 404)", async () => {
    const target = await signUp(request);
    const bystander = await signUp(request);
    const targetId = (await request("GET", "/users/me", { token: target.token })).body.id;
    const refused = await request("DELETE", `/users/${targetId}`, { token: bystander.token });
    assert.equal(refused.status, 404);
    assert.equal((await request("GET", "/users/me", { token: target.token })).status, 200, "nothing deleted");

    const admin = await request("POST", "/signup", { body: { email: ADMIN, password: GOOD_PASSWORD } });
    assert.equal(admin.status, 201);
    assert.equal((await request("DELETE", `/users/${targetId}`, { token: admin.body.access_token })).status, 204);
    assert.equal((await request("GET", "/users/me", { token: target.token })).status, 401);
    assert.equal((await request("DELETE", `/users/${targetId}`, { token: admin.body.access_token })).status, 404, "already gone");
    const events = (await request("GET", "/audit?limit=200", { token: admin.body.access_token })).body.events as Array<Record<string, any>>;
    const deleted = events.find((e) => e.action === "account.deleted" && e.object_id === targetId);
    assert.equal(deleted?.actor.email, ADMIN);
    assert.equal(deleted?.detail, target.email);

    const self = await signUp(request);
    const selfId = (await request("GET", "/users/me", { token: self.token })).body.id;
    assert.equal((await request("DELETE", `/users/${selfId}`, { token: self.token })).status, 204, "one's own id");
    assert.equal((await request("POST", "/signin", { body: { email: uniqueEmail(), password: GOOD_PASSWORD } })).status, 401);
  });
});
