import assert from "node:assert/strict";
import crypto from "node:crypto";
import { describe, it } from "node:test";
import { createGroup, signUp } from "../fixtures/http-client";
import { useSluice } from "../fixtures/use-sluice";

let owner: { email: string; token: string };
let group: string;
const sluice = useSluice({
  setUp: async ({ request }) => {
    owner = await signUp(request, "msg");
    group = await createGroup(request, owner.token, "msg");
  },
});
const { request } = sluice;

/** The 422's field errors, as [field, message] pairs. */
function fieldErrors(res: { status: number; text: string; body: { errors?: Array<{ field: string; message: string }> } }): string[][] {
  assert.equal(res.status, 422, res.text);
  return (res.body.errors ?? []).map((e) => [e.field, e.message]);
}

describe("validation errors say what to send", () => {
  it("a missing body names the fields to send (PUT /data_pipelines/{id}/schedule without a body)", async () => {
    const res = await request("PUT", `/data_pipelines/${crypto.randomUUID()}/schedule`, { token: owner.token });
    assert.deepEqual(fieldErrors(res), [["body", "is required: send a JSON object with every_minutes, cron, timezone or paused (Content-Type: application/json)"]]);
    assert.equal(res.body.detail, "Invalid request: body is required: send a JSON object with every_minutes, cron, timezone or paused (Content-Type: application/json)");
    assert.doesNotMatch(res.text, /Invalid input|expected object|received undefined/);
  });

  it("a body that is not an object names the required and optional fields", async () => {
    const res = await request("POST", "/data_pipelines", { token: owner.token, body: ["name"] });
    assert.deepEqual(fieldErrors(res), [["body", "must be a JSON object with name, data_source_id and collection_id, and optionally description"]]);
  });

  it("a missing field is required, a wrong type says what it must be and what came", async () => {
    const res = await request("POST", "/data_pipelines", { token: owner.token, body: { name: 5, description: null, collection_id: crypto.randomUUID() } });
    assert.deepEqual(fieldErrors(res), [
      ["name", "must be a string, not a number"],
      ["description", "must be a string, not null"],
      ["data_source_id", "is required"],
    ]);
    assert.equal(res.body.detail, "Invalid request: name must be a string, not a number; description must be a string, not null; data_source_id is required");
  });

  it("an unknown enum value lists the values there are", async () => {
    const res = await request("GET", `/collections/${crypto.randomUUID()}/search?q=x&mode=fast`, { token: owner.token });
    assert.deepEqual(fieldErrors(res), [["mode", "must be one of keyword, semantic, hybrid"]]);
  });

  it("too small, too large, not whole: the bound in words", async () => {
    assert.deepEqual(fieldErrors(await request("GET", "/models/library/search?top_k=0", { token: owner.token })), [["top_k", "must be at least 1"]]);
    assert.deepEqual(fieldErrors(await request("GET", "/models/library/search?top_k=101", { token: owner.token })), [["top_k", "must be at most 100"]]);
    assert.deepEqual(fieldErrors(await request("GET", "/models/library/search?top_k=ten", { token: owner.token })), [["top_k", "must be a number"]]);
    const page = await request("GET", `/collections/${crypto.randomUUID()}/documents?offset=1.5`, { token: owner.token });
    assert.deepEqual(fieldErrors(page), [["offset", "must be a whole number, not 1.5"]]);
    const long = await request("POST", "/models/my", { token: owner.token, body: { model_name: "tinyllama", hardware_notes: "x".repeat(2001) } });
    assert.deepEqual(fieldErrors(long), [["hardware_notes", "must be at most 2000 characters"]]);
  });

  it("a field the body does not take is named with the ones it does", async () => {
    const res = await request("PUT", `/data_pipelines/${crypto.randomUUID()}/schedule`, { token: owner.token, body: { every_minutes: 10, hourly: true } });
    assert.deepEqual(fieldErrors(res), [["body", "does not take hourly: it takes every_minutes, cron, timezone and paused"]]);
  });

  it("params, query and body errors answer together in one 422", async () => {
    const res = await request("GET", `/collections/${crypto.randomUUID()}/search?top_k=0`, { token: owner.token });
    assert.deepEqual(fieldErrors(res), [["q", "is required"], ["top_k", "must be at least 1"]]);
  });
});

describe("ids are UUIDs at the edge", () => {
  it("a path id that is not a UUID answers exactly as a missing one: 404, same detail", async () => {
    for (const route of ["/data_pipelines/%s", "/data_pipelines/%s/jobs", "/collections/%s/documents", "/conversations/%s"]) {
      const missing = await request("GET", route.replace("%s", crypto.randomUUID()), { token: owner.token });
      assert.equal(missing.status, 404, missing.text);
      for (const odd of ["not-a-uuid", "1", "3f2c1e9a-8b7d-4c6e-9f01-23456789abcz", `${crypto.randomUUID()}x`]) {
        const res = await request("GET", route.replace("%s", odd), { token: owner.token });
        assert.equal(res.status, 404, `${route} ${odd}: ${res.text}`);
        assert.deepEqual(res.body, missing.body, `${route} ${odd}`);
      }
    }
  });

  it("a body id that is not a UUID answers as a missing one (400 or 404 as the route documents)", async () => {
    const missingGroup = await request("POST", "/collections", { token: owner.token, body: { name: "msg_c", owner_group_id: crypto.randomUUID() } });
    const oddGroup = await request("POST", "/collections", { token: owner.token, body: { name: "msg_c", owner_group_id: "nope" } });
    assert.equal(missingGroup.status, 400, missingGroup.text);
    assert.deepEqual([oddGroup.status, oddGroup.body], [missingGroup.status, missingGroup.body]);

    const collection = await request("POST", "/collections", { token: owner.token, body: { name: "msg_c", owner_group_id: group } });
    assert.equal(collection.status, 201, collection.text);
    const pipeline = (dataSourceId: string) =>
      request("POST", "/data_pipelines", { token: owner.token, body: { name: "p", data_source_id: dataSourceId, collection_id: collection.body.id } });
    const missingSource = await pipeline(crypto.randomUUID());
    const oddSource = await pipeline("does-not-exist");
    assert.equal(missingSource.status, 404, missingSource.text);
    assert.deepEqual([oddSource.status, oddSource.body], [missingSource.status, missingSource.body]);

    const missingParent = await request("PUT", `/user_groups/${group}/parent`, { token: owner.token, body: { parent_group_id: crypto.randomUUID() } });
    const oddParent = await request("PUT", `/user_groups/${group}/parent`, { token: owner.token, body: { parent_group_id: "nope" } });
    assert.equal(missingParent.status, 400, missingParent.text);
    assert.deepEqual([oddParent.status, oddParent.body], [missingParent.status, missingParent.body]);
  });

  it("an empty body id is still required, and a NUL in one is still refused", async () => {
    const empty = await request("POST", "/collections", { token: owner.token, body: { name: "msg_e", owner_group_id: "" } });
    assert.deepEqual(fieldErrors(empty), [["owner_group_id", "is required"]]);
    const nul = await request("POST", "/collections", { token: owner.token, body: { name: "msg_e", owner_group_id: "no\u0000pe" } });
    assert.deepEqual(fieldErrors(nul), [["owner_group_id", "must not contain NUL characters"]]);
  });

  it("a UUID in capitals names the same row: ids are handed on in lowercase, as they are stored", async () => {
    const res = await request("PUT", `/user_groups/${group.toUpperCase()}/parent`, { token: owner.token, body: { parent_group_id: null } });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.id, group);
    const collection = await request("POST", "/collections", { token: owner.token, body: { name: "msg_upper", owner_group_id: group.toUpperCase() } });
    assert.equal(collection.status, 201, collection.text);
    assert.equal(collection.body.owner_group_id, group);
  });

  it("the document shows every id parameter as a UUID", async () => {
    const doc = (await request("GET", "/openapi.json")).body;
    const idParameters = Object.values(doc.paths as Record<string, Record<string, { parameters?: Array<{ name: string; in: string; schema: { format?: string } }> }>>)
      .flatMap((item) => Object.values(item))
      .flatMap((op) => op.parameters ?? [])
      .filter((p) => p.in === "path" && p.name !== "email");
    assert.ok(idParameters.length >= 20, `${idParameters.length} id parameters`);
    for (const p of idParameters) assert.equal(p.schema.format, "uuid", p.name);
  });
});
