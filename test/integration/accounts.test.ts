import assert from "node:assert/strict";
import crypto from "node:crypto";
import { describe, it } from "node:test";
import bcrypt from "bcryptjs";
import { decodeJwt, decodeProtectedHeader, SignJWT } from "jose";
import { User } from "../../server/data/entities/user.entity";
import type { Storage } from "../../server/storage";
import { openStorage } from "../../server/composition/compose";
import { loadConfig } from "../../server/config";
import { GOOD_PASSWORD, signUp, uniqueEmail } from "../fixtures/http-client";
import { useSluice } from "../fixtures/use-sluice";

const sluice = useSluice();
const { request } = sluice;

/** An HS256 token with the server's claims, signed with the given secret. */
function sign(claims: { email?: unknown; sub?: string }, secret: string, lifetimeSeconds: number, iat = Math.floor(Date.now() / 1000)): Promise<string> {
  return new SignJWT({ email: claims.email })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setIssuedAt(iat)
    .setExpirationTime(iat + lifetimeSeconds)
    .setSubject(claims.sub!)
    .sign(new TextEncoder().encode(secret));
}

/** The server's storage opened beside it (its DATA_DIR's SQLite file, or on a team server its database), as the server reads it. */
async function withStorage<T>(use: (storage: Storage) => Promise<T>): Promise<T> {
  const { dataDir, databaseUrl } = sluice.server;
  const config = loadConfig({ DATA_DIR: dataDir, SLUICE_SECRETS: "file", ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) });
  const storage = await openStorage(config, { warn: () => undefined });
  try {
    return await use(storage);
  } finally {
    await storage.index.close();
    await storage.db.destroy();
  }
}

const signingSecret = () => withStorage(async (storage) => (await storage.secrets.get("jwt-signing-secret"))!);
const storedHash = (email: string) => withStorage(async (storage) => (await storage.db.manager.findOneByOrFail(User, { email })).passwordHash!);

function cookieOf(res: { headers: Headers }): string {
  const setCookie = res.headers.get("set-cookie") ?? "";
  return setCookie;
}

describe("POST /signup", () => {
  it("answers 201 with a bearer token and an HttpOnly SameSite=Lax access_token cookie", async () => {
    const email = uniqueEmail();
    const res = await request("POST", "/signup", { body: { email, password: GOOD_PASSWORD } });
    assert.equal(res.status, 201);
    assert.equal(res.body.token_type, "bearer");
    assert.equal(typeof res.body.access_token, "string");
    assert.deepEqual(Object.keys(res.body).sort(), ["access_token", "token_type"]);
    const cookie = cookieOf(res);
    assert.match(cookie, new RegExp(`^access_token=${res.body.access_token};`));
    assert.match(cookie, /HttpOnly/);
    assert.match(cookie, /SameSite=Lax/);
    assert.match(cookie, /Max-Age=86400/);
  });

  it("issues a 24-hour HS256 JWT with sub, email, iat and exp", async () => {
    const email = uniqueEmail();
    const res = await request("POST", "/signup", { body: { email, password: GOOD_PASSWORD } });
    assert.deepEqual(decodeProtectedHeader(res.body.access_token), { alg: "HS256", typ: "JWT" });
    const claims = decodeJwt(res.body.access_token);
    assert.deepEqual(Object.keys(claims), ["email", "iat", "exp", "sub"], "the claims of every token issued so far, in their order");
    assert.equal(claims.exp! - claims.iat!, 86400);
    assert.equal(claims.email, email);
    const me = await request("GET", "/users/me", { token: res.body.access_token });
    assert.equal(claims.sub, me.body.id);
  });

  it("treats emails case-insensitively and answers 409 for a second sign-up", async () => {
    const email = uniqueEmail();
    assert.equal((await request("POST", "/signup", { body: { email, password: GOOD_PASSWORD } })).status, 201);
    const again = await request("POST", "/signup", { body: { email: email.toUpperCase(), password: GOOD_PASSWORD } });
    assert.equal(again.status, 409);
    assert.match(again.body.detail, /already exists/);
  });

  const badPasswords: Array<[string, string, RegExp]> = [
    ["too short", "abc1234", /at least 8/],
    ["too long", `${"a1".repeat(50)}x`, /at most 100/],
    ["no digit", "abcdefghij", /digit/],
    ["no letter", "1234567890", /letter/],
  ];
  for (const [name, password, message] of badPasswords) {
    it(`rejects a password that is ${name} with 422 and creates nothing`, async () => {
      const email = uniqueEmail();
      const res = await request("POST", "/signup", { body: { email, password } });
      assert.equal(res.status, 422);
      assert.equal(typeof res.body.detail, "string");
      assert.equal(res.body.errors[0].field, "password");
      assert.match(res.body.errors[0].message, message);
      const signin = await request("POST", "/signin", { body: { email, password } });
      assert.equal(signin.status, 401);
    });
  }

  it("accepts passwords of exactly 8 and exactly 100 characters", async () => {
    for (const password of ["abcdefg1", `${"a".repeat(99)}1`]) {
      const res = await request("POST", "/signup", { body: { email: uniqueEmail(), password } });
      assert.equal(res.status, 201, `length ${password.length}`);
    }
  });

  it("uses every byte of a long password (no cut at bcrypt's 72), hashed at bcrypt cost 12", async () => {
    const email = uniqueEmail();
    // 100 characters, 148 bytes (ä takes two): the first 72 bytes are the same in all three.
    const password = `pw1-${"ä".repeat(48)}${"b".repeat(48)}`;
    assert.equal((await request("POST", "/signup", { body: { email, password } })).status, 201);
    assert.equal((await request("POST", "/signin", { body: { email, password: `pw1-${"ä".repeat(48)}${"c".repeat(48)}` } })).status, 401);
    assert.equal((await request("POST", "/signin", { body: { email, password: `pw1-${"ä".repeat(34)}` } })).status, 401, "the first 72 bytes alone");
    assert.equal((await request("POST", "/signin", { body: { email, password } })).status, 200);
    const hash = await storedHash(email);
    assert.match(hash, /^\$sluice-hmac-sha256\$2b\$12\$/);
  });

  it("a password hashed the old way (bcrypt over the password, cost 10) still signs in, and is hashed again the new way", async () => {
    const email = uniqueEmail("legacy");
    const now = new Date();
    await withStorage((storage) =>
      storage.db.manager.insert(User, {
        id: crypto.randomUUID(),
        email,
        passwordHash: bcrypt.hashSync(GOOD_PASSWORD, 10),
        displayName: null,
        avatarUrl: null,
        idpSubject: null,
        createdAt: now,
        updatedAt: now,
        lastSignInAt: null,
      }),
    );
    assert.equal((await request("POST", "/signin", { body: { email, password: "wrong-password-1" } })).status, 401);
    assert.equal((await request("POST", "/signin", { body: { email, password: GOOD_PASSWORD } })).status, 200);
    assert.match(await storedHash(email), /^\$sluice-hmac-sha256\$2b\$12\$/, "upgraded on sign-in");
    assert.equal((await request("POST", "/signin", { body: { email, password: GOOD_PASSWORD } })).status, 200, "and still signs in");
  });

  it("rejects an invalid email with 422", async () => {
    const res = await request("POST", "/signup", { body: { email: "not-an-email", password: GOOD_PASSWORD } });
    assert.equal(res.status, 422);
    assert.equal(res.body.errors[0].field, "email");
  });
});

describe("POST /signin", () => {
  it("answers 200 with a token and the cookie for the right password", async () => {
    const { email } = await signUp(request);
    const res = await request("POST", "/signin", { body: { email: email.toUpperCase(), password: GOOD_PASSWORD } });
    assert.equal(res.status, 200);
    assert.equal(res.body.token_type, "bearer");
    assert.match(cookieOf(res), /access_token=.*HttpOnly/);
  });

  it("answers 401 with the same detail for a wrong password and an unknown email", async () => {
    const { email } = await signUp(request);
    const wrong = await request("POST", "/signin", { body: { email, password: "wrong-password-1" } });
    const unknown = await request("POST", "/signin", { body: { email: uniqueEmail(), password: GOOD_PASSWORD } });
    assert.equal(wrong.status, 401);
    assert.equal(unknown.status, 401);
    assert.equal(wrong.body.detail, unknown.body.detail);
  });
});

describe("authentication", () => {
  it("accepts the bearer header and the cookie", async () => {
    const { email, token } = await signUp(request);
    const byHeader = await request("GET", "/users/me", { token });
    const byCookie = await request("GET", "/users/me", { headers: { cookie: `access_token=${token}` } });
    assert.equal(byHeader.status, 200);
    assert.equal(byCookie.status, 200);
    assert.equal(byHeader.body.email, email);
    assert.equal(byCookie.body.email, email);
  });

  it("answers 401 without a token", async () => {
    const res = await request("GET", "/users/me");
    assert.equal(res.status, 401);
    assert.equal(typeof res.body.detail, "string");
  });

  it("answers 401 for a forged token (signed with another secret)", async () => {
    const { token } = await signUp(request);
    const claims = decodeJwt(token);
    const forged = await sign(claims, "not-the-secret-but-32-characters-long", 3600);
    assert.equal((await request("GET", "/users/me", { token: forged })).status, 401);
    const [, payload] = token.split(".");
    const unsigned = `${Buffer.from(JSON.stringify({ alg: "none", typ: "JWT" })).toString("base64url")}.${payload}.`;
    assert.equal((await request("GET", "/users/me", { token: unsigned })).status, 401, "alg none is refused");
    assert.equal((await request("GET", "/users/me", { token: `${token.slice(0, -2)}xx` })).status, 401);
    assert.equal((await request("GET", "/users/me", { token: "garbage" })).status, 401);
  });

  it("answers 401 for an expired token signed with the real secret", async () => {
    const { token } = await signUp(request);
    const claims = decodeJwt(token);
    const secret = await signingSecret();
    const valid = await sign(claims, secret, 60);
    assert.equal((await request("GET", "/users/me", { token: valid })).status, 200, "control: the secret is the server's");
    const expired = await sign(claims, secret, 86400, Math.floor(Date.now() / 1000) - 86401);
    const res = await request("GET", "/users/me", { token: expired });
    assert.equal(res.status, 401);
    assert.match(res.body.detail, /expired/i);
  });

  it("answers 401 for a token we would not issue: without exp or iat, living longer than a session, issued in the future", async () => {
    const { token } = await signUp(request);
    const { sub, email } = decodeJwt(token);
    const secret = new TextEncoder().encode(await signingSecret());
    const now = Math.floor(Date.now() / 1000);
    const make = (claims: { iat?: number; exp?: number }) => {
      const jwt = new SignJWT({ email }).setProtectedHeader({ alg: "HS256", typ: "JWT" }).setSubject(sub!);
      if (claims.iat !== undefined) jwt.setIssuedAt(claims.iat);
      if (claims.exp !== undefined) jwt.setExpirationTime(claims.exp);
      return jwt.sign(secret);
    };
    assert.equal((await request("GET", "/users/me", { token: await make({ iat: now, exp: now + 86400 }) })).status, 200, "control: a full session's token");
    assert.equal((await request("GET", "/users/me", { token: await make({ iat: now + 30, exp: now + 3600 }) })).status, 200, "control: a clock a little ahead");
    for (const [name, claims] of [
      ["no exp", { iat: now }],
      ["no iat", { exp: now + 3600 }],
      ["a year long", { iat: now, exp: now + 365 * 86400 }],
      ["a second over 24 hours", { iat: now - 10, exp: now + 86391 }],
      ["issued an hour ahead", { iat: now + 3600, exp: now + 7200 }],
    ] as const) {
      const res = await request("GET", "/users/me", { token: await make(claims) });
      assert.equal(res.status, 401, name);
      assert.match(res.body.detail, /sign in again/, name);
    }
  });

  it("a deleted user's valid token answers 401 on every authenticated route", async () => {
    const { token } = await signUp(request);
    const { sub } = decodeJwt(token);
    await withStorage((storage) => storage.db.manager.delete(User, { id: sub }));
    for (const [method, path, body] of [
      ["GET", "/users/me"],
      ["GET", "/users"],
      ["POST", "/user_groups", { group_name: `orphan-${process.pid}`, group_permission: "write" }],
      ["GET", "/user_groups"],
      ["GET", "/collections"],
      ["GET", "/data_pipelines"],
      ["POST", "/signout"],
    ] as const) {
      const res = await request(method, path, { token, body });
      assert.equal(res.status, 401, `${method} ${path}`);
      assert.match(res.body.detail, /no longer exists/, `${method} ${path}`);
    }
  });

  it("POST /signout clears the cookie and needs authentication", async () => {
    const { token } = await signUp(request);
    const res = await request("POST", "/signout", { headers: { cookie: `access_token=${token}` } });
    assert.equal(res.status, 200);
    assert.match(cookieOf(res), /access_token=;.*Expires=Thu, 01 Jan 1970/);
    assert.equal((await request("POST", "/signout")).status, 401);
  });
});

describe("users", () => {
  it("GET /users/me returns the user record without secrets", async () => {
    const { email, token } = await signUp(request);
    const res = await request("GET", "/users/me", { token });
    assert.equal(res.status, 200);
    assert.equal(res.body.email, email);
    assert.match(res.body.id, /^[0-9a-f-]{36}$/);
    for (const key of Object.keys(res.body)) assert.doesNotMatch(key, /password|hash|secret|token/);
    assert.doesNotMatch(res.text, /\$2[aby]\$/);
    assert.match(res.body.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}$/);
  });

  it("GET /users lists users without password hashes", async () => {
    const a = await signUp(request);
    const res = await request("GET", "/users", { token: a.token });
    assert.equal(res.status, 200);
    assert.ok(res.body.some((u: { email: string }) => u.email === a.email));
    assert.doesNotMatch(res.text, /\$2[aby]\$|password/);
  });

  it("GET /users/{id}/user_groups: all of your own groups, only the shared ones of another user, 404 for an unknown id", async () => {
    const a = await signUp(request);
    const b = await signUp(request);
    const shared = await request("POST", "/user_groups", { token: a.token, body: { group_name: `shared-${Date.now()}`, group_permission: "read" } });
    const bOnly = await request("POST", "/user_groups", { token: b.token, body: { group_name: `bonly-${Date.now()}`, group_permission: "read" } });
    await request("PUT", `/user_groups/${shared.body.created_group_id}/members/${b.email}`, { token: a.token });
    const bId = (await request("GET", "/users/me", { token: b.token })).body.id;

    const own = await request("GET", `/users/${bId}/user_groups`, { token: b.token });
    assert.equal(own.status, 200);
    assert.deepEqual(own.body.map((g: { id: string }) => g.id).sort(), [shared.body.created_group_id, bOnly.body.created_group_id].sort());

    const seenByA = await request("GET", `/users/${bId}/user_groups`, { token: a.token });
    assert.deepEqual(seenByA.body.map((g: { id: string }) => g.id), [shared.body.created_group_id]);

    const unknown = await request("GET", `/users/00000000-0000-4000-8000-000000000000/user_groups`, { token: a.token });
    assert.equal(unknown.status, 404);
  });
});

describe("GET /instance", () => {
  it("tells the caller at the server's own machine that they can change its settings, except on a team server; over plain HTTP no certificate", async () => {
    const { token } = await signUp(request);
    const res = await request("GET", "/instance", { token });
    assert.equal(res.status, 200);
    // These requests come over loopback; a team server (DATABASE_URL) has its administrator elsewhere.
    assert.deepEqual(res.body, { can_change_settings: sluice.server.databaseUrl === null, administrators_only: false, tls: null });
  });

  it("answers 401 without a session", async () => {
    const res = await request("GET", "/instance");
    assert.equal(res.status, 401);
  });
});
