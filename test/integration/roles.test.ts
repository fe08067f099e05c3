import assert from "node:assert/strict";
import fs from "node:fs";
import { describe, it } from "node:test";
import { Invitation } from "../../server/data/entities/invitation.entity";
import { openStorage } from "../../server/composition/compose";
import { loadConfig } from "../../server/config";
import { createGroup, GOOD_PASSWORD, signUp, uniqueEmail, type Request } from "../fixtures/http-client";
import { storedText, tempDir } from "../fixtures/sluice-server";
import { useSluice, type SluiceHandle } from "../fixtures/use-sluice";

// Issue 34 item 1 on a desktop instance (127.0.0.1, no ADMIN_EMAILS): the first account
// administers, every account still does instance-wide things, sign-up is open, and
// invitations work as on a LAN server. The LAN rules are in roles-lan.test.ts.
const folderRoot = fs.realpathSync(tempDir("sluice-roles-folder-"));
let admin: { email: string; token: string };
let member: { email: string; token: string };
const sluice = useSluice({
  env: { FOLDER_SOURCE_ROOTS: folderRoot },
  setUp: async ({ request }) => {
    admin = await signUp(request, "roles-admin");
    member = await signUp(request, "roles-member");
  },
});
const { request } = sluice;

/** The invitation row behind an id, changed in the server's own storage (the SQLite file or its PostgreSQL database). */
async function changeInvitation(handle: SluiceHandle, id: string, changes: Partial<Invitation>): Promise<void> {
  const { dataDir, databaseUrl } = handle.server;
  const storage = await openStorage(loadConfig({ DATA_DIR: dataDir, SLUICE_SECRETS: "file", ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) }), { warn: () => undefined });
  try {
    await storage.db.transaction((tx) => tx.update(Invitation, { id }, changes));
  } finally {
    await storage.index.close();
    await storage.db.destroy();
  }
}

const tokenOf = (link: string) => new URL(link.replace("#/signup", "signup")).searchParams.get("invitation")!;

async function invite(req: Request, token: string, email = uniqueEmail("invited")) {
  const res = await req("POST", "/invitations", { token, body: { email } });
  assert.equal(res.status, 201, res.text);
  return { email, id: res.body.id as string, link: res.body.link as string, token: tokenOf(res.body.link) };
}

describe("who administers a desktop instance", () => {
  it("GET /users/me says is_admin: true for the first account, false for the others", async () => {
    const first = await request("GET", "/users/me", { token: admin.token });
    assert.equal(first.status, 200);
    assert.equal(first.body.is_admin, true);
    assert.equal((await request("GET", "/users/me", { token: member.token })).body.is_admin, false);
  });

  it("every account still does the instance-wide things, as before: no 403", async () => {
    const refresh = await request("POST", "/models/library/refresh", { token: member.token });
    assert.equal(refresh.status, 503, refresh.text);
    const removed = await request("DELETE", "/models/00000000-0000-4000-8000-000000000000", { token: member.token });
    assert.equal(removed.status, 404, removed.text);
    const group = await createGroup(request, member.token, "roles-desk");
    const folder = await request("POST", `/data_sources/folder/${group}`, {
      token: member.token,
      body: { data_source: { data_source_name: "Desk folder" }, folder_source: { path: folderRoot } },
    });
    assert.equal(folder.status, 201, folder.text);
  });

  it("GET /signup (public) says sign-up is open and that the first account exists", async () => {
    const res = await request("GET", "/signup");
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { signup: "open", first_account: false, invitation: null });
  });
});

describe("invitations", () => {
  it("only an administrator may make, list or withdraw them: 403 saying so, nothing made", async () => {
    const made = await request("POST", "/invitations", { token: member.token, body: { email: uniqueEmail("x") } });
    assert.equal(made.status, 403);
    assert.match(made.body.detail, /^Only an administrator of this instance can invite people$/);
    const listed = await request("GET", "/invitations", { token: member.token });
    assert.equal(listed.status, 403);
    assert.match(listed.body.detail, /administrator/);
    const withdrawn = await request("DELETE", "/invitations/00000000-0000-4000-8000-000000000000", { token: member.token });
    assert.equal(withdrawn.status, 403);
    assert.equal((await request("GET", "/invitations", { token: admin.token })).body.length, 0);
    assert.equal((await request("POST", "/invitations", { body: { email: uniqueEmail("x") } })).status, 401);
  });

  it("POST answers 201 with a single-use link for 7 days; the list never shows the link, and storage keeps only its hash", async () => {
    const email = uniqueEmail("Invited");
    const res = await request("POST", "/invitations", { token: admin.token, body: { email } });
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(Object.keys(res.body).sort(), ["created_at", "email", "expires_at", "group_id", "id", "link", "state", "used_at"]);
    assert.equal(res.body.email, email.toLowerCase());
    assert.equal(res.body.state, "pending");
    assert.match(res.body.link, new RegExp(`^${sluice.server.url}/#/signup\\?invitation=[A-Za-z0-9_-]{43}$`));
    const days = (Date.parse(`${res.body.expires_at}Z`) - Date.parse(`${res.body.created_at}Z`)) / 86_400_000;
    assert.equal(days, 7);
    const listed = await request("GET", "/invitations", { token: admin.token });
    assert.equal(listed.status, 200);
    const row = listed.body.find((i: { id: string }) => i.id === res.body.id);
    assert.equal(row.link, undefined);
    assert.ok(!listed.text.includes(tokenOf(res.body.link)));
    assert.ok(!(await storedText(sluice.server)).includes(tokenOf(res.body.link)), "the token is not in storage");
  });

  it("refuses an address that has an account (409) and a bad address (422 under email)", async () => {
    const taken = await request("POST", "/invitations", { token: admin.token, body: { email: member.email.toUpperCase() } });
    assert.equal(taken.status, 409);
    assert.match(taken.body.detail, /already exists/);
    const bad = await request("POST", "/invitations", { token: admin.token, body: { email: "not-an-address" } });
    assert.equal(bad.status, 422);
    assert.deepEqual(bad.body.errors.map((e: { field: string }) => e.field), ["email"]);
  });

  it("GET /signup?invitation= names the invited address; an unknown token is 404", async () => {
    const made = await invite(request, admin.token);
    const res = await request("GET", `/signup?invitation=${made.token}`);
    assert.equal(res.status, 200);
    assert.equal(res.body.invitation.email, made.email);
    const unknown = await request("GET", "/signup?invitation=nothing-like-it");
    assert.equal(unknown.status, 404);
    assert.match(unknown.body.detail, /not valid/);
  });

  it("signs up only its own address (422 under email otherwise), once: then 410", async () => {
    const made = await invite(request, admin.token);
    const wrong = await request("POST", "/signup", { body: { email: uniqueEmail("other"), password: GOOD_PASSWORD, invitation: made.token } });
    assert.equal(wrong.status, 422);
    assert.deepEqual(wrong.body.errors, [{ field: "email", message: "must be the address the invitation was made for" }]);
    const used = await request("POST", "/signup", { body: { email: made.email, password: GOOD_PASSWORD, invitation: made.token } });
    assert.equal(used.status, 201, used.text);
    const again = await request("POST", "/signup", { body: { email: uniqueEmail("late"), password: GOOD_PASSWORD, invitation: made.token } });
    assert.equal(again.status, 410);
    assert.match(again.body.detail, /already been used/);
    assert.equal((await request("GET", `/signup?invitation=${made.token}`)).status, 410);
    const row = (await request("GET", "/invitations", { token: admin.token })).body.find((i: { id: string }) => i.id === made.id);
    assert.equal(row.state, "used");
    assert.equal(typeof row.used_at, "string");
  });

  it("an expired invitation answers 410 and signs nobody up", async () => {
    const made = await invite(request, admin.token);
    await changeInvitation(sluice, made.id, { expiresAt: new Date(Date.now() - 1000) });
    const res = await request("POST", "/signup", { body: { email: made.email, password: GOOD_PASSWORD, invitation: made.token } });
    assert.equal(res.status, 410);
    assert.match(res.body.detail, /expired/);
    assert.equal((await request("POST", "/signin", { body: { email: made.email, password: GOOD_PASSWORD } })).status, 401);
    const row = (await request("GET", "/invitations", { token: admin.token })).body.find((i: { id: string }) => i.id === made.id);
    assert.equal(row.state, "expired");
  });

  it("DELETE withdraws it (204): its link is then 404; a second DELETE is 404", async () => {
    const made = await invite(request, admin.token);
    assert.equal((await request("DELETE", `/invitations/${made.id}`, { token: admin.token })).status, 204);
    const res = await request("POST", "/signup", { body: { email: made.email, password: GOOD_PASSWORD, invitation: made.token } });
    assert.equal(res.status, 404);
    const again = await request("DELETE", `/invitations/${made.id}`, { token: admin.token });
    assert.equal(again.status, 404);
    assert.equal(again.body.detail, "Invitation not found");
  });

  it("while an invitation waits for an address, open sign-up without its link is refused (403), so nobody takes the invited person's place", async () => {
    const made = await invite(request, admin.token);
    const res = await request("POST", "/signup", { body: { email: made.email, password: GOOD_PASSWORD } });
    assert.equal(res.status, 403);
    assert.match(res.body.detail, /invitation is waiting/);
  });
});

describe("adding a member by an address without an account", () => {
  it("answers 202 with an invitation into the group; signing up with it joins the group", async () => {
    const group = await createGroup(request, member.token, "roles-team");
    const email = uniqueEmail("newcomer");
    const res = await request("PUT", `/user_groups/${group}/members/${encodeURIComponent(email)}`, { token: member.token });
    assert.equal(res.status, 202, res.text);
    assert.equal(res.body.email, email);
    assert.equal(res.body.group_id, group);
    const signed = await request("POST", "/signup", { body: { email, password: GOOD_PASSWORD, invitation: tokenOf(res.body.link) } });
    assert.equal(signed.status, 201, signed.text);
    const me = await request("GET", "/users/me", { token: signed.body.access_token });
    const groups = await request("GET", `/users/${me.body.id}/user_groups`, { token: signed.body.access_token });
    assert.deepEqual(groups.body.map((g: { id: string }) => g.id), [group]);
    // Now that the account exists, adding it again is the usual 204.
    assert.equal((await request("PUT", `/user_groups/${group}/members/${encodeURIComponent(email)}`, { token: member.token })).status, 204);
  });

  it("a second add replaces the first invitation (its link stops working); a non-member of the group gets 404; not an address is 422", async () => {
    const group = await createGroup(request, member.token, "roles-again");
    const email = uniqueEmail("twice");
    const first = await request("PUT", `/user_groups/${group}/members/${email}`, { token: member.token });
    const second = await request("PUT", `/user_groups/${group}/members/${email}`, { token: member.token });
    assert.equal(second.status, 202);
    assert.equal((await request("GET", `/signup?invitation=${tokenOf(first.body.link)}`)).status, 404);
    assert.equal((await request("GET", `/signup?invitation=${tokenOf(second.body.link)}`)).status, 200);
    const outsider = await request("PUT", `/user_groups/${group}/members/${uniqueEmail("x")}`, { token: admin.token });
    assert.equal(outsider.status, 404);
    const bad = await request("PUT", `/user_groups/${group}/members/not-an-address`, { token: member.token });
    assert.equal(bad.status, 422);
    assert.deepEqual(bad.body.errors, [{ field: "email", message: "must be a valid email address" }]);
  });
});
