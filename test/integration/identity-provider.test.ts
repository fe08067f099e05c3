import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { startFakeIdp, type FakeIdp } from "../fixtures/fake-idp";
import { startSluice } from "../fixtures/sluice-server";
import { signUp } from "../fixtures/http-client";
import { useSluice } from "../fixtures/use-sluice";

let idp: FakeIdp;

const { request } = useSluice({
  env: async () => {
    idp = await startFakeIdp();
    return { IDP_JWKS_URL: idp.jwksUrl, IDP_ISSUER: idp.issuer, IDP_AUDIENCE: idp.audience };
  },
});
const plain = useSluice();
after(async () => {
  await idp.close();
});

let n = 0;
const subject = () => `idp-user-${process.pid}-${++n}`;

describe("POST /auth/session", () => {
  it("creates the social user on first exchange: user record, 24-hour cookie, profile from claims", async () => {
    const sub = subject();
    const token = await idp.mint({ sub, email: `${sub}@Example.com`, name: "Ada Lovelace", picture: "https://img.example/ada.png" });
    const res = await request("POST", "/auth/session", { token });
    assert.equal(res.status, 200);
    assert.equal(res.body.email, `${sub}@example.com`);
    assert.equal(res.body.display_name, "Ada Lovelace");
    assert.equal(res.body.avatar_url, "https://img.example/ada.png");
    for (const field of ["created_at", "updated_at", "last_sign_in_at"]) assert.match(res.body[field], /^\d{4}-\d\d-\d\dT[\d:.]+$/);
    const cookie = res.headers.get("set-cookie")!;
    assert.match(cookie, /access_token=[^;]+;.*Max-Age=86400.*HttpOnly.*SameSite=Lax/);

    const serviceToken = /access_token=([^;]+)/.exec(cookie)![1];
    const me = await request("GET", "/users/me", { headers: { cookie: `access_token=${serviceToken}` } });
    assert.equal(me.status, 200);
    assert.equal(me.body.id, res.body.id);
  });

  it("updates the profile on later exchanges and keeps the same user", async () => {
    const sub = subject();
    const first = await request("POST", "/auth/session", { token: await idp.mint({ sub, email: `${sub}@example.com`, name: "Old" }) });
    const second = await request("POST", "/auth/session", { token: await idp.mint({ sub, email: `${sub}@example.com`, name: "New" }) });
    assert.equal(second.body.id, first.body.id);
    assert.equal(second.body.display_name, "New");
    const users = await request("GET", "/users", { headers: { cookie: /access_token=[^;]+/.exec(second.headers.get("set-cookie")!)![0] } });
    assert.equal(users.body.filter((u: { email: string }) => u.email === `${sub}@example.com`).length, 1);
  });

  it("refuses a token signed by a key outside the JWKS, an expired one, a wrong issuer or audience, and none (401)", async () => {
    const sub = subject();
    const claims = { sub, email: `${sub}@example.com` };
    const bad = [
      await idp.mintWithForeignKey(claims),
      await idp.mint(claims, { expiresIn: Math.floor(Date.now() / 1000) - 60 }),
      await idp.mint(claims, { issuer: "https://evil.example/" }),
      await idp.mint(claims, { audience: "someone-else" }),
    ];
    for (const token of bad) assert.equal((await request("POST", "/auth/session", { token })).status, 401);
    assert.equal((await request("POST", "/auth/session")).status, 401);
    const users = await request("GET", "/users", { token: (await signUp(request)).token });
    assert.ok(!users.text.includes(sub), "no user was created");
  });

  it("refuses a token without an email claim (401)", async () => {
    const res = await request("POST", "/auth/session", { token: await idp.mint({ sub: subject() }) });
    assert.equal(res.status, 401);
  });

  it("refuses an email the provider says is not verified (401 with a clear detail); true or absent is taken", async () => {
    for (const unverified of [false, "false"]) {
      const sub = subject();
      const res = await request("POST", "/auth/session", { token: await idp.mint({ sub, email: `${sub}@example.com`, email_verified: unverified }) });
      assert.equal(res.status, 401, String(unverified));
      assert.match(res.body.detail, /not verified this email address/);
      assert.equal(res.headers.get("set-cookie"), null);
    }
    for (const verified of [{ email_verified: true }, {}]) {
      const sub = subject();
      assert.equal((await request("POST", "/auth/session", { token: await idp.mint({ sub, email: `${sub}@example.com`, ...verified }) })).status, 200);
    }
  });

  it("a server with IDP_JWKS_URL but no IDP_ISSUER or IDP_AUDIENCE refuses to start, naming both", async () => {
    await assert.rejects(startSluice({ env: { IDP_JWKS_URL: idp.jwksUrl } }), (error: Error) => {
      assert.match(error.message, /exited with 1 before listening/);
      assert.match(error.message, /IDP_ISSUER must be set when IDP_JWKS_URL is.*IDP_AUDIENCE must be set when IDP_JWKS_URL is/s);
      return true;
    });
    await assert.rejects(startSluice({ env: { IDP_JWKS_URL: idp.jwksUrl, IDP_ISSUER: idp.issuer } }), /IDP_AUDIENCE must be set/);
  });

  it("answers 409 instead of taking over a password account with the same email", async () => {
    const existing = await signUp(request);
    const res = await request("POST", "/auth/session", { token: await idp.mint({ sub: subject(), email: existing.email }) });
    assert.equal(res.status, 409);
  });

  it("an identity-provider token is refused (401) on every other endpoint", async () => {
    const sub = subject();
    const token = await idp.mint({ sub, email: `${sub}@example.com` });
    assert.equal((await request("POST", "/auth/session", { token })).status, 200, "the token itself is valid");
    for (const [method, path] of [
      ["GET", "/users/me"],
      ["GET", "/users"],
      ["GET", "/user_groups"],
      ["GET", "/collections"],
      ["POST", "/signout"],
    ]) {
      assert.equal((await request(method, path, { token })).status, 401, `${method} ${path}`);
      assert.equal((await request(method, path, { headers: { cookie: `access_token=${token}` } })).status, 401, `${method} ${path} cookie`);
    }
  });

  it("answers 503 when no identity provider is configured, and password sign-in still works", async () => {
    const plainRequest = plain.request;
    const sub = subject();
    const res = await plainRequest("POST", "/auth/session", { token: await idp.mint({ sub, email: `${sub}@example.com` }) });
    assert.equal(res.status, 503);
    assert.match(res.body.detail, /not configured/);
    assert.equal((await plainRequest("POST", "/auth/session")).status, 503);
    const { email } = await signUp(plainRequest);
    assert.equal((await plainRequest("POST", "/signin", { body: { email, password: "correct-horse-42" } })).status, 200);
  });
});

describe("a new social account follows the sign-up rules (issue 34)", () => {
  let closed: FakeIdp;
  const admin = `idp-admin-${process.pid}@corp.example`;
  const invite = useSluice({
    env: async () => {
      closed = await startFakeIdp();
      return { IDP_JWKS_URL: closed.jwksUrl, IDP_ISSUER: closed.issuer, IDP_AUDIENCE: closed.audience, SIGNUP: "invite", ADMIN_EMAILS: admin };
    },
  });
  after(async () => {
    await closed?.close();
  });

  it("under SIGNUP=invite an unknown address gets 403 and no account; an ADMIN_EMAILS address gets in", async () => {
    const sub = subject();
    const refused = await invite.request("POST", "/auth/session", { token: await closed.mint({ sub, email: `${sub}@corp.example` }) });
    assert.equal(refused.status, 403);
    assert.equal(refused.body.detail, "Sign-up on this instance is by invitation: ask an administrator for an invitation link");
    assert.equal(refused.headers.get("set-cookie"), null);
    const named = await invite.request("POST", "/auth/session", { token: await closed.mint({ sub: subject(), email: admin }) });
    assert.equal(named.status, 200, named.text);
    const cookie = /access_token=[^;]+/.exec(named.headers.get("set-cookie")!)![0];
    const users = await invite.request("GET", "/users", { headers: { cookie } });
    assert.deepEqual(users.body.map((u: { email: string }) => u.email), [admin]);
  });
});

describe("a social account's sessions", () => {
  it("has no password to change (409), and after signing out everywhere a new exchange signs in again", async () => {
    const sub = subject();
    const mint = () => idp.mint({ sub, email: `${sub}@example.com` });
    const first = await request("POST", "/auth/session", { token: await mint() });
    const session = /access_token=([^;]+)/.exec(first.headers.get("set-cookie")!)![1];
    const change = await request("PUT", "/users/me/password", { token: session, body: { current_password: "anything-1", new_password: "a-new-password-8" } });
    assert.equal(change.status, 409);
    assert.match(change.body.detail, /identity provider/);
    assert.equal((await request("POST", "/signout?everywhere=true", { token: session })).status, 200);
    assert.equal((await request("GET", "/users/me", { token: session })).status, 401);
    const again = await request("POST", "/auth/session", { token: await mint() });
    const renewed = /access_token=([^;]+)/.exec(again.headers.get("set-cookie")!)![1];
    assert.equal((await request("GET", "/users/me", { token: renewed })).status, 200, "the new token carries the raised generation");
  });
});
