import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import { describe, it } from "node:test";
import { createGroup, GOOD_PASSWORD, type Request } from "../fixtures/http-client";
import { countRows, tempDir } from "../fixtures/sluice-server";
import { useSluice } from "../fixtures/use-sluice";

// Issue 34 item 1: the rules of a server that is not only the desktop's. Named administrators
// (ADMIN_EMAILS) on loopback; a HOST that is this machine's LAN address (sign-up by invitation
// by default); and SIGNUP=off. roles.test.ts has the desktop rules and the invitations themselves.
const folderRoot = fs.realpathSync(tempDir("sluice-roles-lan-folder-"));
let counter = 0;
const address = (name: string, domain: string) => `${name}-${process.pid}-${++counter}@${domain}`;

async function signUpAs(request: Request, email: string, invitation?: string) {
  const res = await request("POST", "/signup", { body: { email, password: GOOD_PASSWORD, ...(invitation ? { invitation } : {}) } });
  return { res, email, token: res.body?.access_token as string };
}

const isAdmin = async (request: Request, token: string) => (await request("GET", "/users/me", { token })).body.is_admin;

/** This machine's first non-loopback IPv4 address, if it has one. */
function lanAddress(): string | null {
  for (const list of Object.values(os.networkInterfaces())) {
    for (const entry of list ?? []) if (entry.family === "IPv4" && !entry.internal) return entry.address;
  }
  return null;
}

describe("ADMIN_EMAILS set (server on 127.0.0.1, SIGNUP_DOMAINS=corp.example)", () => {
  const boss = address("boss", "admin.example");
  const sluice = useSluice({ env: { ADMIN_EMAILS: ` ${boss.toUpperCase()} , other@admin.example`, SIGNUP_DOMAINS: "corp.example", FOLDER_SOURCE_ROOTS: folderRoot } });
  const { request } = sluice;
  let staff: { token: string };
  let admin: { token: string };

  it("the first account is not an administrator; an ADMIN_EMAILS address is, and may sign up outside SIGNUP_DOMAINS", async () => {
    const first = await signUpAs(request, address("alice", "corp.example"));
    assert.equal(first.res.status, 201, first.res.text);
    staff = first;
    assert.equal(await isAdmin(request, staff.token), false);
    const named = await signUpAs(request, boss);
    assert.equal(named.res.status, 201, named.res.text);
    admin = named;
    assert.equal(await isAdmin(request, admin.token), true);
  });

  it("open sign-up outside SIGNUP_DOMAINS is 403 naming the domains, and makes no account", async () => {
    const users = await countRows(sluice.server, "users");
    const outsider = await signUpAs(request, address("eve", "elsewhere.example"));
    assert.equal(outsider.res.status, 403);
    assert.match(outsider.res.body.detail, /open to addresses at corp\.example only/);
    assert.equal(await countRows(sluice.server, "users"), users);
  });

  it("instance-wide actions answer 403 to others, saying an administrator can; nothing changes", async () => {
    const cases: Array<[string, string, unknown, RegExp]> = [
      ["DELETE", "/models/00000000-0000-4000-8000-000000000000", undefined, /^Only an administrator of this instance can delete catalog models$/],
      ["POST", "/models/library/refresh", undefined, /^Only an administrator of this instance can refresh the model library$/],
      ["POST", "/models", { model_name: "llama3.2" }, /^Only an administrator of this instance can pull models$/],
    ];
    for (const [method, path, body, detail] of cases) {
      const res = await request(method, path, { token: staff.token, body });
      assert.equal(res.status, 403, `${method} ${path}: ${res.text}`);
      assert.match(res.body.detail, detail);
    }
    const group = await createGroup(request, staff.token, "lan-staff");
    const folder = await request("POST", `/data_sources/folder/${group}`, {
      token: staff.token,
      body: { data_source: { data_source_name: "Staff folder" }, folder_source: { path: folderRoot } },
    });
    assert.equal(folder.status, 403);
    assert.match(folder.body.detail, /^Only an administrator of this instance can create folder sources$/);
    assert.equal(await countRows(sluice.server, "data_sources"), 0);
  });

  it("an administrator passes the same gates (404 for no such model, 503 without MODEL_LIBRARY_URL, 201 for a folder)", async () => {
    assert.equal((await request("DELETE", "/models/00000000-0000-4000-8000-000000000000", { token: admin.token })).status, 404);
    assert.equal((await request("POST", "/models/library/refresh", { token: admin.token })).status, 503);
    const group = await createGroup(request, admin.token, "lan-admin");
    const folder = await request("POST", `/data_sources/folder/${group}`, {
      token: admin.token,
      body: { data_source: { data_source_name: "Admin folder" }, folder_source: { path: folderRoot } },
    });
    assert.equal(folder.status, 201, folder.text);
  });

  it("GET /instance says instance-wide actions are administrators' here", async () => {
    assert.equal((await request("GET", "/instance", { token: staff.token })).body.administrators_only, true);
  });

  it("GET /signup: open (the loopback default), the first account made", async () => {
    assert.deepEqual((await request("GET", "/signup")).body, { signup: "open", first_account: false, invitation: null });
  });
});

const lan = lanAddress();
describe("HOST is this machine's LAN address, no ADMIN_EMAILS", { skip: lan ? false : "this machine has no non-loopback IPv4 address" }, () => {
  const sluice = useSluice({ env: { HOST: lan ?? "127.0.0.1" } });
  const { request } = sluice;
  let admin: { token: string };
  let staff: { token: string };

  it("says in the log that the first account becomes the administrator, and that the LAN gets plain HTTP without TLS_CERT", () => {
    assert.match(sluice.server.output(), /reachable from the LAN and ADMIN_EMAILS is not set: the first account to sign up becomes this instance's administrator/);
    assert.match(sluice.server.output(), /serves plain HTTP to the LAN: passwords, tokens and the session cookie cross the network readable; set TLS_CERT and TLS_KEY/);
  });

  it("sign-up is by invitation by default; the first account may sign up and administers", async () => {
    assert.deepEqual((await request("GET", "/signup")).body, { signup: "invite", first_account: true, invitation: null });
    const first = await signUpAs(request, address("first", "lan.example"));
    assert.equal(first.res.status, 201, first.res.text);
    admin = first;
    assert.equal(await isAdmin(request, admin.token), true);
    assert.equal((await request("GET", "/signup")).body.first_account, false);
    const uninvited = await signUpAs(request, address("second", "lan.example"));
    assert.equal(uninvited.res.status, 403);
    assert.equal(uninvited.res.body.detail, "Sign-up on this instance is by invitation: ask an administrator for an invitation link");
  });

  it("an invitation is the way in; the invited account is no administrator and gets 403 on instance-wide actions", async () => {
    const email = address("invited", "lan.example");
    const made = await request("POST", "/invitations", { token: admin.token, body: { email } });
    assert.equal(made.status, 201, made.text);
    const token = new URL(made.body.link.replace("#/signup", "signup")).searchParams.get("invitation")!;
    const joined = await signUpAs(request, email, token);
    assert.equal(joined.res.status, 201, joined.res.text);
    staff = joined;
    assert.equal(await isAdmin(request, staff.token), false);
    const pull = await request("POST", "/models", { token: staff.token, body: { model_name: "llama3.2" } });
    assert.equal(pull.status, 403);
    assert.match(pull.body.detail, /administrator/);
  });

  it("adding an address without an account: 403 for a member (under invite only an administrator invites), 202 for the administrator", async () => {
    const group = await createGroup(request, staff.token, "lan-team");
    const email = address("newcomer", "lan.example");
    const byMember = await request("PUT", `/user_groups/${group}/members/${email}`, { token: staff.token });
    assert.equal(byMember.status, 403);
    assert.equal(byMember.body.detail, "Only an administrator of this instance can invite someone who has no account yet");
    const adminGroup = await createGroup(request, admin.token, "lan-admins");
    assert.equal((await request("PUT", `/user_groups/${adminGroup}/members/${email}`, { token: admin.token })).status, 202);
  });
});

describe("SIGNUP=off with ADMIN_EMAILS", () => {
  const root = address("root", "corp.example");
  const { request } = useSluice({ env: { SIGNUP: "off", ADMIN_EMAILS: root } });

  it("refuses every sign-up but an administrator's, even the first; invitations answer 409", async () => {
    const first = await signUpAs(request, address("someone", "corp.example"));
    assert.equal(first.res.status, 403);
    assert.equal(first.res.body.detail, "Sign-up is closed on this instance: ask its administrator for an account");
    assert.deepEqual((await request("GET", "/signup")).body, { signup: "off", first_account: false, invitation: null });
    const admin = await signUpAs(request, root);
    assert.equal(admin.res.status, 201, admin.res.text);
    const invite = await request("POST", "/invitations", { token: admin.token, body: { email: address("x", "corp.example") } });
    assert.equal(invite.status, 409);
    assert.match(invite.body.detail, /SIGNUP=off/);
  });
});
