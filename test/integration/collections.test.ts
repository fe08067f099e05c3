import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createGroup, signUp } from "../fixtures/http-client";
import { useSluice } from "../fixtures/use-sluice";

const { request } = useSluice();

let n = 0;
const colName = () => `col_${process.pid}_${++n}`;
const RANDOM_ID = "3f0e8a5c-1b2d-4c6e-9f10-0123456789ab";

describe("POST /collections", () => {
  it("answers 201 with the collection record", async () => {
    const a = await signUp(request);
    const group = await createGroup(request, a.token);
    const name = colName();
    const res = await request("POST", "/collections", { token: a.token, body: { name, owner_group_id: group } });
    assert.equal(res.status, 201);
    assert.equal(res.body.name, name);
    assert.equal(res.body.owner_group_id, group);
    assert.match(res.body.id, /^[0-9a-f-]{36}$/);
    assert.equal(res.body.document_count, 0);
    assert.equal(res.body.chunk_count, 0);
    assert.match(res.body.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}$/);
  });

  it("answers 403 for a group the caller is not a member of, saying membership is required", async () => {
    const a = await signUp(request);
    const b = await signUp(request);
    const group = await createGroup(request, a.token);
    const res = await request("POST", "/collections", { token: b.token, body: { name: colName(), owner_group_id: group } });
    assert.equal(res.status, 403);
    assert.match(res.body.detail, /member/i);
  });

  it("answers 400 for a nonexistent group", async () => {
    const a = await signUp(request);
    const res = await request("POST", "/collections", { token: a.token, body: { name: colName(), owner_group_id: RANDOM_ID } });
    assert.equal(res.status, 400);
  });

  it("answers 400 for a taken name, even in another group", async () => {
    const a = await signUp(request);
    const g1 = await createGroup(request, a.token);
    const g2 = await createGroup(request, a.token);
    const name = colName();
    assert.equal((await request("POST", "/collections", { token: a.token, body: { name, owner_group_id: g1 } })).status, 201);
    const dup = await request("POST", "/collections", { token: a.token, body: { name, owner_group_id: g2 } });
    assert.equal(dup.status, 400);
    assert.match(dup.body.detail, /already exists/);
  });

  for (const bad of ["has-hyphen", "has space", "dot.name", "ümlaut", ""]) {
    it(`rejects the name ${JSON.stringify(bad)} with 422 (letters, digits, underscores only)`, async () => {
      const a = await signUp(request);
      const group = await createGroup(request, a.token);
      const res = await request("POST", "/collections", { token: a.token, body: { name: bad, owner_group_id: group } });
      assert.equal(res.status, 422);
      assert.equal(res.body.errors[0].field, "name");
    });
  }
});

describe("two users in different groups", () => {
  it("each sees only their own collections and gets the same 404 for a denied and a random id", async () => {
    const a = await signUp(request, "alice");
    const b = await signUp(request, "bob");
    const ga = await createGroup(request, a.token);
    const gb = await createGroup(request, b.token);
    const ca = (await request("POST", "/collections", { token: a.token, body: { name: colName(), owner_group_id: ga } })).body;
    const cb = (await request("POST", "/collections", { token: b.token, body: { name: colName(), owner_group_id: gb } })).body;

    const aList = await request("GET", "/collections", { token: a.token });
    const bList = await request("GET", "/collections", { token: b.token });
    assert.deepEqual(aList.body.map((c: { id: string }) => c.id), [ca.id]);
    assert.deepEqual(bList.body.map((c: { id: string }) => c.id), [cb.id]);

    const denied = await request("DELETE", `/collections/${cb.id}`, { token: a.token });
    const random = await request("DELETE", `/collections/${RANDOM_ID}`, { token: a.token });
    assert.equal(denied.status, 404);
    assert.equal(random.status, 404);
    assert.deepEqual(denied.body, random.body);
    assert.equal(denied.headers.get("content-length"), random.headers.get("content-length"));

    const stillThere = await request("GET", "/collections", { token: b.token });
    assert.deepEqual(stillThere.body.map((c: { id: string }) => c.id), [cb.id], "the denied delete changed nothing");
  });

  it("access follows direct membership: joining grants it, leaving revokes it; a parent group grants nothing", async () => {
    const a = await signUp(request);
    const b = await signUp(request);
    const team = await createGroup(request, a.token);
    const parent = await createGroup(request, b.token);
    await request("PUT", `/user_groups/${team}/parent`, { token: a.token, body: { parent_group_id: parent } });
    const col = (await request("POST", "/collections", { token: a.token, body: { name: colName(), owner_group_id: team } })).body;
    const ids = async (token: string) => (await request("GET", "/collections", { token })).body.map((c: { id: string }) => c.id);

    assert.deepEqual(await ids(b.token), [], "member of the parent group only: no inheritance");
    await request("PUT", `/user_groups/${team}/members/${b.email}`, { token: a.token });
    assert.deepEqual(await ids(b.token), [col.id]);
    await request("DELETE", `/user_groups/${team}/members/${b.email}`, { token: a.token });
    assert.deepEqual(await ids(b.token), []);
  });
});

describe("DELETE /collections/{id}", () => {
  it("answers 204 and the collection is gone; a second delete is 404", async () => {
    const a = await signUp(request);
    const group = await createGroup(request, a.token);
    const col = (await request("POST", "/collections", { token: a.token, body: { name: colName(), owner_group_id: group } })).body;
    const res = await request("DELETE", `/collections/${col.id}`, { token: a.token });
    assert.equal(res.status, 204);
    assert.equal(res.text, "");
    assert.deepEqual((await request("GET", "/collections", { token: a.token })).body, []);
    assert.equal((await request("DELETE", `/collections/${col.id}`, { token: a.token })).status, 404);
  });
});
