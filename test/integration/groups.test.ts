import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createGroup, signUp } from "../fixtures/http-client";
import { useSluice } from "../fixtures/use-sluice";

const { request } = useSluice();

let n = 0;
const name = (prefix = "team") => `${prefix}_${process.pid}-${++n}`;

describe("POST /user_groups", () => {
  it("answers 201 {created_group_id} and makes the creator a member", async () => {
    const a = await signUp(request);
    const res = await request("POST", "/user_groups", { token: a.token, body: { group_name: name(), group_permission: "write" } });
    assert.equal(res.status, 201);
    assert.deepEqual(Object.keys(res.body), ["created_group_id"]);
    const list = await request("GET", "/user_groups", { token: a.token });
    const group = list.body.find((g: { id: string }) => g.id === res.body.created_group_id);
    assert.equal(group.is_member, true);
    assert.deepEqual(group.member_emails, [a.email]);
    assert.equal(group.group_permission, "write");
    assert.equal(group.parent_group_id, null);
  });

  const invalid: Array<[string, unknown]> = [
    ["shorter than 3", "ab"],
    ["longer than 50", "a".repeat(51)],
    ["with a space", "bad name"],
    ["with a dot", "bad.name"],
    ["not a string", 42],
  ];
  for (const [why, groupName] of invalid) {
    it(`rejects a group_name ${why} with 422`, async () => {
      const a = await signUp(request);
      const res = await request("POST", "/user_groups", { token: a.token, body: { group_name: groupName, group_permission: "read" } });
      assert.equal(res.status, 422);
      assert.equal(res.body.errors[0].field, "group_name");
    });
  }

  it("accepts names of exactly 3 and 50 characters with letters, digits, underscores and hyphens", async () => {
    const a = await signUp(request);
    const suffix = String(process.pid % 1000).padStart(3, "0");
    for (const groupName of [`g${suffix}`.slice(0, 3), `A-b_${suffix}`.padEnd(50, "z")]) {
      const res = await request("POST", "/user_groups", { token: a.token, body: { group_name: groupName, group_permission: "none" } });
      assert.equal(res.status, 201, `${groupName}: ${res.text}`);
    }
  });

  it("rejects an unknown group_permission with 422 and a duplicate name with 409", async () => {
    const a = await signUp(request);
    const bad = await request("POST", "/user_groups", { token: a.token, body: { group_name: name(), group_permission: "admin" } });
    assert.equal(bad.status, 422);
    assert.equal(bad.body.errors[0].field, "group_permission");
    const groupName = name();
    assert.equal((await request("POST", "/user_groups", { token: a.token, body: { group_name: groupName, group_permission: "read" } })).status, 201);
    const dup = await request("POST", "/user_groups", { token: a.token, body: { group_name: groupName, group_permission: "read" } });
    assert.equal(dup.status, 409);
  });
});

describe("GET /user_groups", () => {
  it("lists every group, with member emails only for the caller's groups", async () => {
    const a = await signUp(request);
    const b = await signUp(request);
    const aGroup = await createGroup(request, a.token);
    const list = await request("GET", "/user_groups", { token: b.token });
    assert.equal(list.status, 200);
    const seen = list.body.find((g: { id: string }) => g.id === aGroup);
    assert.equal(seen.is_member, false);
    assert.equal(seen.member_emails, null);
    assert.ok(!list.text.includes(a.email));
  });
});

describe("members", () => {
  it("PUT adds a member (204), DELETE removes one (204); membership grants and revokes access", async () => {
    const a = await signUp(request);
    const b = await signUp(request);
    const group = await createGroup(request, a.token);
    const add = await request("PUT", `/user_groups/${group}/members/${encodeURIComponent(b.email)}`, { token: a.token });
    assert.equal(add.status, 204);
    assert.equal(add.text, "");
    let bView = (await request("GET", "/user_groups", { token: b.token })).body.find((g: { id: string }) => g.id === group);
    assert.equal(bView.is_member, true);
    assert.deepEqual(bView.member_emails, [a.email, b.email].sort());
    const again = await request("PUT", `/user_groups/${group}/members/${b.email}`, { token: a.token });
    assert.equal(again.status, 204, "adding an existing member is idempotent");

    const remove = await request("DELETE", `/user_groups/${group}/members/${b.email}`, { token: a.token });
    assert.equal(remove.status, 204);
    bView = (await request("GET", "/user_groups", { token: b.token })).body.find((g: { id: string }) => g.id === group);
    assert.equal(bView.is_member, false);
  });

  it("adding an email without an account answers 202 with an invitation into the group (roles.test.ts follows it)", async () => {
    const a = await signUp(request);
    const group = await createGroup(request, a.token);
    const res = await request("PUT", `/user_groups/${group}/members/nobody-${Date.now()}@example.com`, { token: a.token });
    assert.equal(res.status, 202);
    assert.equal(res.body.group_id, group);
  });

  it("non-members get 404 for member changes, the same as for a random group id", async () => {
    const a = await signUp(request);
    const b = await signUp(request);
    const group = await createGroup(request, a.token);
    const denied = await request("PUT", `/user_groups/${group}/members/${b.email}`, { token: b.token });
    const random = await request("PUT", `/user_groups/00000000-0000-4000-8000-000000000000/members/${b.email}`, { token: b.token });
    assert.equal(denied.status, 404);
    assert.deepEqual(denied.body, random.body);
    assert.equal((await request("DELETE", `/user_groups/${group}/members/${a.email}`, { token: b.token })).status, 404);
  });

  it("removing the last member answers 409; removing a non-member answers 404", async () => {
    const a = await signUp(request);
    const b = await signUp(request);
    const group = await createGroup(request, a.token);
    const last = await request("DELETE", `/user_groups/${group}/members/${a.email}`, { token: a.token });
    assert.equal(last.status, 409);
    const notMember = await request("DELETE", `/user_groups/${group}/members/${b.email}`, { token: a.token });
    assert.equal(notMember.status, 404);
  });
});

describe("parent and tree", () => {
  it("sets a parent, shows it in the tree, clears it with null", async () => {
    const a = await signUp(request);
    const root = await createGroup(request, a.token, "root");
    const child = await createGroup(request, a.token, "child");
    const grandchild = await createGroup(request, a.token, "grandchild");
    assert.equal((await request("PUT", `/user_groups/${child}/parent`, { token: a.token, body: { parent_group_id: root } })).status, 200);
    const set = await request("PUT", `/user_groups/${grandchild}/parent`, { token: a.token, body: { parent_group_id: child } });
    assert.equal(set.status, 200);
    assert.equal(set.body.parent_group_id, child);

    const tree = await request("GET", "/user_groups/tree", { token: a.token });
    assert.equal(tree.status, 200);
    const rootNode = tree.body.find((g: { id: string }) => g.id === root);
    assert.deepEqual(Object.keys(rootNode).sort(), ["children", "group_name", "group_permission", "id"]);
    assert.equal(rootNode.children[0].id, child);
    assert.equal(rootNode.children[0].children[0].id, grandchild);
    assert.ok(!tree.body.some((g: { id: string }) => g.id === child), "a child is not a root");

    const cleared = await request("PUT", `/user_groups/${grandchild}/parent`, { token: a.token, body: { parent_group_id: null } });
    assert.equal(cleared.body.parent_group_id, null);
    const after = await request("GET", "/user_groups/tree", { token: a.token });
    assert.ok(after.body.some((g: { id: string }) => g.id === grandchild), "back to a root");
  });

  it("rejects a cycle (self, or a descendant as parent) with 400", async () => {
    const a = await signUp(request);
    const top = await createGroup(request, a.token);
    const mid = await createGroup(request, a.token);
    const low = await createGroup(request, a.token);
    await request("PUT", `/user_groups/${mid}/parent`, { token: a.token, body: { parent_group_id: top } });
    await request("PUT", `/user_groups/${low}/parent`, { token: a.token, body: { parent_group_id: mid } });
    const self = await request("PUT", `/user_groups/${top}/parent`, { token: a.token, body: { parent_group_id: top } });
    assert.equal(self.status, 400);
    const cycle = await request("PUT", `/user_groups/${top}/parent`, { token: a.token, body: { parent_group_id: low } });
    assert.equal(cycle.status, 400);
    assert.match(cycle.body.detail, /cycle/);
    const list = await request("GET", "/user_groups", { token: a.token });
    assert.equal(list.body.find((g: { id: string }) => g.id === top).parent_group_id, null, "nothing changed");
  });

  it("a nonexistent parent is 400; a non-member setting the parent gets 404", async () => {
    const a = await signUp(request);
    const b = await signUp(request);
    const group = await createGroup(request, a.token);
    const missing = await request("PUT", `/user_groups/${group}/parent`, {
      token: a.token,
      body: { parent_group_id: "00000000-0000-4000-8000-000000000000" },
    });
    assert.equal(missing.status, 400);
    const bGroup = await createGroup(request, b.token);
    const denied = await request("PUT", `/user_groups/${group}/parent`, { token: b.token, body: { parent_group_id: bGroup } });
    assert.equal(denied.status, 404);
  });
});

describe("DELETE /user_groups/{id}", () => {
  it("answers 409 naming the collections it owns, then 204 once they are gone", async () => {
    const a = await signUp(request);
    const group = await createGroup(request, a.token);
    const colName = `owned_${process.pid}_${++n}`;
    const col = await request("POST", "/collections", { token: a.token, body: { name: colName, owner_group_id: group } });
    const blocked = await request("DELETE", `/user_groups/${group}`, { token: a.token });
    assert.equal(blocked.status, 409);
    assert.match(blocked.body.detail, new RegExp(colName));
    assert.equal((await request("DELETE", `/collections/${col.body.id}`, { token: a.token })).status, 204);
    const ok = await request("DELETE", `/user_groups/${group}`, { token: a.token });
    assert.equal(ok.status, 204);
    const list = await request("GET", "/user_groups", { token: a.token });
    assert.ok(!list.body.some((g: { id: string }) => g.id === group));
  });

  it("re-roots the children of a deleted group; non-members get 404", async () => {
    const a = await signUp(request);
    const b = await signUp(request);
    const parent = await createGroup(request, a.token);
    const child = await createGroup(request, a.token);
    await request("PUT", `/user_groups/${child}/parent`, { token: a.token, body: { parent_group_id: parent } });
    assert.equal((await request("DELETE", `/user_groups/${parent}`, { token: b.token })).status, 404);
    assert.equal((await request("DELETE", `/user_groups/${parent}`, { token: a.token })).status, 204);
    const list = await request("GET", "/user_groups", { token: a.token });
    assert.equal(list.body.find((g: { id: string }) => g.id === child).parent_group_id, null);
  });
});
