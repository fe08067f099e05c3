import crypto from "node:crypto";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, describe, it } from "node:test";
import { startFakeOllama, type FakeOllama } from "../fixtures/fake-ollama";
import { createGroup, GOOD_PASSWORD, signUp, uniqueEmail } from "../fixtures/http-client";
import { tempDir } from "../fixtures/sluice-server";
import { postSse } from "../fixtures/sse-client";
import { useSluice } from "../fixtures/use-sluice";

const ADMIN = `admin-keys-${process.pid}@example.com`;
const folderRoot = fs.realpathSync(tempDir("sluice-audit-root-"));
let ollama: FakeOllama;
const sluice = useSluice({
  env: async () => {
    ollama = await startFakeOllama();
    return { ADMIN_EMAILS: `other@example.com, ${ADMIN.toUpperCase()}`, FOLDER_SOURCE_ROOTS: folderRoot, OLLAMA_HOST: ollama.url };
  },
});
const { request } = sluice;
after(async () => {
  await ollama.close();
});

async function adminToken(): Promise<string> {
  const signin = await request("POST", "/signin", { body: { email: ADMIN, password: GOOD_PASSWORD } });
  if (signin.status === 200) return signin.body.access_token;
  const res = await request("POST", "/signup", { body: { email: ADMIN, password: GOOD_PASSWORD } });
  assert.equal(res.status, 201);
  return res.body.access_token;
}

/** Every audit event on every page, newest first. */
async function allEvents(token: string): Promise<Array<Record<string, any>>> {
  const events: Array<Record<string, any>> = [];
  let before: string | null = null;
  do {
    const res: { status: number; body: { events: Array<Record<string, any>>; next: string | null } } = await request("GET", `/audit?limit=200${before ? `&before=${before}` : ""}`, { token });
    assert.equal(res.status, 200);
    events.push(...res.body.events);
    before = res.body.next;
  } while (before);
  return events;
}

describe("API keys", () => {
  it("POST answers {id, name, key} once; the key works as a bearer token with the user's rights", async () => {
    const { email, token } = await signUp(request);
    const made = await request("POST", "/users/me/api_keys", { token, body: { name: "backup script" } });
    assert.equal(made.status, 201);
    assert.deepEqual(Object.keys(made.body).sort(), ["id", "key", "name"]);
    assert.equal(made.body.name, "backup script");
    assert.match(made.body.key, /^sluice_key_[A-Za-z0-9_-]{43}$/);
    const me = await request("GET", "/users/me", { token: made.body.key });
    assert.equal(me.status, 200);
    assert.equal(me.body.email, email);
    const group = await request("POST", "/user_groups", { token: made.body.key, body: { group_name: `by-key-${process.pid}-${Date.now()}`, group_permission: "read" } });
    assert.equal(group.status, 201, "the key acts as its owner");
  });

  it("GET lists name, created and last used, never the key; DELETE revokes it and the key is refused from then on", async () => {
    const { token } = await signUp(request);
    const made = await request("POST", "/users/me/api_keys", { token, body: { name: "ci" } });
    const before = await request("GET", "/users/me/api_keys", { token });
    assert.equal(before.status, 200);
    assert.deepEqual(before.body, [{ id: made.body.id, name: "ci", created_at: before.body[0].created_at, last_used_at: null }]);
    assert.equal((await request("GET", "/users/me", { token: made.body.key })).status, 200);
    const used = await request("GET", "/users/me/api_keys", { token });
    assert.match(used.body[0].last_used_at, /^\d{4}-\d\d-\d\dT/);
    assert.ok(!before.text.includes(made.body.key) && !used.text.includes(made.body.key), "the list never carries the key");

    const revoked = await request("DELETE", `/users/me/api_keys/${made.body.id}`, { token });
    assert.equal(revoked.status, 204);
    const refused = await request("GET", "/users/me", { token: made.body.key });
    assert.equal(refused.status, 401);
    assert.match(refused.body.detail, /revoked/);
    assert.deepEqual((await request("GET", "/users/me/api_keys", { token })).body, []);
    assert.equal((await request("DELETE", `/users/me/api_keys/${made.body.id}`, { token })).status, 404, "a second revoke");
  });

  it("another user's key id answers 404 and stays valid; a made-up key is a 401", async () => {
    const a = await signUp(request);
    const b = await signUp(request);
    const key = await request("POST", "/users/me/api_keys", { token: a.token, body: { name: "a's" } });
    const res = await request("DELETE", `/users/me/api_keys/${key.body.id}`, { token: b.token });
    assert.equal(res.status, 404);
    assert.equal((await request("DELETE", "/users/me/api_keys/not-an-id", { token: b.token })).status, 404);
    assert.equal((await request("GET", "/users/me", { token: key.body.key })).status, 200);
    assert.equal((await request("GET", "/users/me", { token: `sluice_key_${"A".repeat(43)}` })).status, 401);
  });

  it("refuses a missing or blank name with 422 and makes nothing; 401 without a session", async () => {
    const { token } = await signUp(request);
    for (const body of [{}, { name: "   " }, { name: "x".repeat(101) }]) {
      const res = await request("POST", "/users/me/api_keys", { token, body });
      assert.equal(res.status, 422);
      assert.equal(res.body.errors[0].field, "name");
    }
    assert.deepEqual((await request("GET", "/users/me/api_keys", { token })).body, []);
    assert.equal((await request("GET", "/users/me/api_keys")).status, 401);
    assert.equal((await request("POST", "/users/me/api_keys", { body: { name: "x" } })).status, 401);
  });

  it("a key cannot make keys, change the password or delete its account (403), so a leaked key cannot outlive its revocation", async () => {
    const { token } = await signUp(request);
    const { body: key } = await request("POST", "/users/me/api_keys", { token, body: { name: "k" } });
    const more = await request("POST", "/users/me/api_keys", { token: key.key, body: { name: "more" } });
    assert.equal(more.status, 403);
    assert.match(more.body.detail, /sign in with the password/);
    const password = await request("PUT", "/users/me/password", { token: key.key, body: { current_password: GOOD_PASSWORD, new_password: "another-pass-7" } });
    assert.equal(password.status, 403);
    assert.equal((await request("DELETE", "/users/me", { token: key.key })).status, 403);
    assert.equal((await request("GET", "/users/me/api_keys", { token })).body.length, 1);
  });

  it("the key never reaches the server's log", async () => {
    const { token } = await signUp(request);
    const { body: key } = await request("POST", "/users/me/api_keys", { token, body: { name: "logged?" } });
    await request("GET", "/users/me", { token: key.key });
    await request("GET", "/users/me", { token: "sluice_key_wrong-key-that-is-refused" });
    assert.ok(sluice.server.output().includes("/api/users/me"), "control: the requests were logged");
    assert.equal(sluice.server.output().includes(key.key), false);
    assert.equal(sluice.server.output().includes("wrong-key-that-is-refused"), false);
  });
});

describe("GET /audit", () => {
  it("answers 403 to a non-administrator, with a detail that says who can", async () => {
    const { token } = await signUp(request);
    const res = await request("GET", "/audit", { token });
    assert.equal(res.status, 403);
    assert.match(res.body.detail, /administrator/);
    assert.equal((await request("GET", "/audit")).status, 401);
  });

  it("records sign-ups, sign-ins, failed sign-ins with the email tried, API keys, groups, memberships and parents, with actor, address and time", async () => {
    const admin = await adminToken();
    const { email, token } = await signUp(request);
    const tried = uniqueEmail("nobody");
    assert.equal((await request("POST", "/signin", { body: { email: tried, password: "wrong-password-1" } })).status, 401);
    assert.equal((await request("POST", "/signin", { body: { email, password: GOOD_PASSWORD } })).status, 200);
    const key = await request("POST", "/users/me/api_keys", { token, body: { name: "audited" } });
    await request("DELETE", `/users/me/api_keys/${key.body.id}`, { token });
    const parent = await request("POST", "/user_groups", { token, body: { group_name: `audit-p-${process.pid}-${Date.now()}`, group_permission: "read" } });
    const child = await request("POST", "/user_groups", { token, body: { group_name: `audit-c-${process.pid}-${Date.now()}`, group_permission: "read" } });
    const other = await signUp(request);
    assert.equal((await request("PUT", `/user_groups/${child.body.created_group_id}/members/${other.email}`, { token })).status, 204);
    assert.equal((await request("PUT", `/user_groups/${child.body.created_group_id}/parent`, { token, body: { parent_group_id: parent.body.created_group_id } })).status, 200);
    assert.equal((await request("DELETE", `/user_groups/${child.body.created_group_id}/members/${other.email}`, { token })).status, 204);
    // A failed request records nothing (an unknown address is an invitation now: issue 34 item 1; an unknown group is a 404).
    assert.equal((await request("PUT", `/user_groups/${crypto.randomUUID()}/members/nobody-${Date.now()}@example.com`, { token })).status, 404);
    const collection = await request("POST", "/collections", { token, body: { name: `audited_${Date.now()}`, owner_group_id: parent.body.created_group_id } });
    assert.equal(collection.status, 201);
    assert.equal((await request("DELETE", `/collections/${collection.body.id}`, { token })).status, 204);

    const events = await allEvents(admin);
    const mine = events.filter((e) => e.actor?.email === email);
    const actions = mine.map((e) => e.action).reverse();
    assert.deepEqual(actions, [
      "sign_up",
      "sign_in",
      "api_key.created",
      "api_key.revoked",
      "group.created",
      "group.created",
      "group.member_added",
      "group.parent_set",
      "group.member_removed",
      "collection.created",
      "collection.deleted",
    ], "a failed request (the 404 member) records nothing");
    const me = (await request("GET", "/users/me", { token })).body;
    for (const event of mine) {
      assert.equal(event.actor.id, me.id);
      assert.match(event.at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}$/);
      assert.match(event.address, /127\.0\.0\.1|::1/);
    }
    assert.equal(mine.find((e) => e.action === "api_key.created")!.object_id, key.body.id);
    assert.equal(mine.find((e) => e.action === "collection.created")!.object_id, collection.body.id);
    assert.equal(mine.find((e) => e.action === "group.member_added")!.detail, other.email);
    assert.equal(mine.find((e) => e.action === "group.parent_set")!.detail, `parent ${parent.body.created_group_id}`);
    const failed = events.find((e) => e.action === "sign_in.failed" && e.actor?.email === tried);
    assert.ok(failed, "the failed sign-in names the email tried");
    assert.equal(failed.actor.id, null);
    assert.equal(JSON.stringify(events).includes(key.body.key), false, "no key in the trail");
    assert.equal(JSON.stringify(events).includes("wrong-password-1"), false, "no password in the trail");
  });

  it("records sources created and deleted, and model pulls and deletions, with the object's id", async () => {
    // Folder sources and model pulls are an administrator's with ADMIN_EMAILS set (issue 34 item 1): the administrator acts here.
    const admin = await adminToken();
    const token = admin;
    const email = ADMIN.toLowerCase();
    const since = new Date().toISOString().replace(/Z$/, "");
    const group = await createGroup(request, token, "audit-src");
    const docs = path.join(folderRoot, `docs-${Date.now()}`);
    fs.mkdirSync(docs);
    const source = await request("POST", `/data_sources/folder/${group}`, { token, body: { data_source: { data_source_name: `audited folder ${Date.now()}` }, folder_source: { path: docs } } });
    assert.equal(source.status, 201, source.text);
    assert.equal((await request("DELETE", `/data_sources/${source.body.data_source.id}`, { token })).status, 204);
    const pulled = await postSse(`${sluice.server.api}/models`, token, { model_name: "tinyllama", update: true });
    assert.equal(pulled.status, 200);
    const completed = pulled.events.at(-1) as { status: string; model?: { id: string } };
    assert.equal(completed.status, "completed", JSON.stringify(pulled.events.slice(-2)));
    const model = completed.model!;
    assert.equal((await request("DELETE", `/models/${model.id}`, { token })).status, 204);

    const mine = (await allEvents(admin)).filter((e) => e.actor?.email === email && e.at >= since && !e.action.startsWith("sign_in")).reverse();
    assert.deepEqual(mine.map((e) => e.action), ["group.created", "source.created", "source.deleted", "model.pull_requested", "model.deleted"]);
    assert.equal(mine[1].object_id, source.body.data_source.id);
    assert.equal(mine[1].detail, "folder");
    assert.equal(mine[2].object_id, source.body.data_source.id);
    assert.equal(mine[3].detail, "tinyllama");
    assert.equal(mine[4].object_id, model.id);
  });

  it("records invitations made and withdrawn, with the invited address, never the link", async () => {
    const admin = await adminToken();
    const invited = uniqueEmail("invited");
    const made = await request("POST", "/invitations", { token: admin, body: { email: invited } });
    assert.equal(made.status, 201, made.text);
    assert.equal((await request("DELETE", `/invitations/${made.body.id}`, { token: admin })).status, 204);
    const events = (await allEvents(admin)).filter((e) => e.object_id === made.body.id).reverse();
    assert.deepEqual(events.map((e) => [e.action, e.detail]), [["invitation.created", invited], ["invitation.deleted", null]]);
    assert.equal(JSON.stringify(events).includes(made.body.link), false, "the link is a secret: never in the trail");
  });

  it("a refused model pull records nothing: not an administrator (403), a registry this instance does not pull from (400)", async () => {
    const admin = await adminToken();
    const someone = await signUp(request);
    const refusedName = `refused-${process.pid}-${Date.now()}`;
    const forbidden = await request("POST", "/models", { token: someone.token, body: { model_name: refusedName } });
    assert.equal(forbidden.status, 403, forbidden.text);
    const foreign = `127.0.0.1:22/ns/${refusedName}`;
    const badRegistry = await request("POST", "/models", { token: admin, body: { model_name: foreign } });
    assert.equal(badRegistry.status, 400, badRegistry.text);
    // Control: an accepted pull of the same kind is recorded, so the absence below is the refusals'.
    const accepted = await postSse(`${sluice.server.api}/models`, admin, { model_name: "tinyllama" });
    assert.equal(accepted.status, 200);
    const pulls = (await allEvents(admin)).filter((e) => e.action === "model.pull_requested");
    assert.ok(pulls.some((e) => e.detail === "tinyllama"), "the accepted pull is in the trail");
    assert.deepEqual(pulls.filter((e) => String(e.detail).includes(refusedName)), [], "neither refused pull is");
  });

  it("adding a member by an address with no account records invitation.created with the invitation's id, not a membership; a repeated add records nothing", async () => {
    // With ADMIN_EMAILS set, sign-up is by invitation and only an administrator may invite: the administrator adds.
    const admin = await adminToken();
    const group = await createGroup(request, admin, "audit-inv");
    const invited = uniqueEmail("no-account");
    const added = await request("PUT", `/user_groups/${group}/members/${invited}`, { token: admin });
    assert.equal(added.status, 202, added.text);
    const member = await signUp(request);
    assert.equal((await request("PUT", `/user_groups/${group}/members/${member.email}`, { token: admin })).status, 204);
    assert.equal((await request("PUT", `/user_groups/${group}/members/${member.email}`, { token: admin })).status, 204, "already a member");

    const events = (await allEvents(admin)).filter((e) => e.object_id === group || e.object_id === added.body.id).reverse();
    assert.deepEqual(events.map((e) => [e.action, e.object_id]), [
      ["group.created", group],
      ["invitation.created", added.body.id],
      ["group.member_added", group],
    ]);
    assert.equal(events[1].detail, `${invited} (into group ${group})`);
    assert.equal(events[2].detail, member.email);
    assert.equal(JSON.stringify(events).includes(added.body.link), false, "the link is a secret: never in the trail");
  });

  it("pages newest first with limit and before; a cursor it did not make is a 422", async () => {
    const admin = await adminToken();
    for (let i = 0; i < 3; i++) await signUp(request);
    const first = await request("GET", "/audit?limit=2", { token: admin });
    assert.equal(first.status, 200);
    assert.equal(first.body.events.length, 2);
    assert.equal(typeof first.body.next, "string");
    const second = await request("GET", `/audit?limit=2&before=${first.body.next}`, { token: admin });
    assert.equal(second.status, 200);
    const times = [...first.body.events, ...second.body.events].map((e: { at: string }) => e.at);
    assert.deepEqual([...times].sort().reverse(), times, "newest first across pages");
    const all = await allEvents(admin);
    assert.deepEqual(all.slice(0, 4), [...first.body.events, ...second.body.events], "the pages join without gap or repeat");
    const bad = await request("GET", "/audit?before=nonsense", { token: admin });
    assert.equal(bad.status, 422);
    assert.equal(bad.body.errors[0].field, "before");
    for (const limit of ["0", "201", "x"]) assert.equal((await request("GET", `/audit?limit=${limit}`, { token: admin })).status, 422, limit);
  });
});

describe("API answers", () => {
  it("carry Cache-Control: no-store, errors and public routes included", async () => {
    const { token } = await signUp(request);
    for (const res of [
      await request("GET", "/users/me", { token }),
      await request("GET", "/users/me"),
      await request("POST", "/signin", { body: { email: uniqueEmail(), password: "wrong-password-1" } }),
      await request("GET", "/health"),
      await request("GET", "/no-such-route", { token }),
    ]) {
      assert.equal(res.headers.get("cache-control"), "no-store", String(res.status));
    }
  });

  it("keep an idle connection for 65 s, longer than clients do (docs/decisions/0530-keep-alive-longer-than-clients.md)", async () => {
    const res = await request("GET", "/health");
    assert.equal(res.headers.get("keep-alive"), "timeout=65");
  });

  it("a request with a password and an Authorization header leaves neither in the log", async () => {
    const password = `never-logged-${process.pid}-9`;
    const bearer = `never-logged-bearer-${process.pid}`;
    await request("POST", "/signin", { body: { email: uniqueEmail(), password }, headers: { authorization: `Bearer ${bearer}` } });
    await request("GET", "/users/me", { headers: { authorization: `Bearer ${bearer}`, cookie: `access_token=${bearer}-cookie` } });
    const output = sluice.server.output();
    assert.ok(output.includes("POST /api/signin 401"), "control: the request was logged");
    assert.equal(output.includes(password), false);
    assert.equal(output.includes(bearer), false);
  });
});
