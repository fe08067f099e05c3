import assert from "node:assert/strict";
import { describe, it } from "node:test";
import express from "express";
import { z } from "zod";
import { documentedRouter } from "../../server/routing/documented-router";
import { openApiDocument, openApiPath } from "../../server/http/openapi";

const ok = (_input: unknown, _req: express.Request, res: express.Response) => {
  res.end();
};

/** A document of one router mounted on an API router, as app.ts mounts them. */
function documentOf(build: (routes: ReturnType<typeof documentedRouter>) => void) {
  const routes = documentedRouter("Things");
  build(routes);
  const api = express.Router();
  api.use(express.json());
  api.use(routes.router);
  return openApiDocument(api);
}

describe("openApiPath", () => {
  it("turns Express's :name parameters into {name}", () => {
    assert.equal(openApiPath("/user_groups/:id/members/:email"), "/user_groups/{id}/members/{email}");
    assert.equal(openApiPath("/models/my"), "/models/my");
  });

  it("refuses path syntax it cannot describe, at start-up rather than with a wrong document", () => {
    for (const p of ["/files/*rest", "/a{/:b}", "/x/(.*)"]) assert.throws(() => openApiPath(p), /only :name parameters/);
  });
});

describe("openApiDocument", () => {
  it("adds the statuses every route of a sort shares: 401 when signed-in, 422 with a schema, 400 and 413 with a body", () => {
    const doc = documentOf((routes) => {
      routes.get("/open", { summary: "s", returns: "r", public: true }, ok);
      routes.post("/things", { summary: "s", returns: "r", status: 201, body: z.object({ a: z.string() }), errors: { 400: "A taken name" } }, ok);
    });
    const open = doc.paths["/open"]?.get;
    assert.deepEqual(open?.security, []);
    assert.deepEqual(Object.keys(open?.responses ?? {}), ["200"]);
    const create = doc.paths["/things"]?.post;
    assert.equal(create?.security, undefined, "signed-in operations take the document's security");
    assert.deepEqual(Object.keys(create?.responses ?? {}), ["201", "400", "401", "413", "422"]);
    assert.equal(create?.responses["400"].description, "The body is not valid JSON; A taken name");
    assert.equal(create?.responses["201"].content?.["application/json"] !== undefined, true);
  });

  it("shows inputs as clients send them: a field with a default is optional, the default is shown", () => {
    const doc = documentOf((routes) => {
      routes.get("/things", { summary: "s", returns: "r", query: z.object({ top_k: z.coerce.number().int().default(10), q: z.string() }) }, ok);
    });
    const params = doc.paths["/things"]?.get?.parameters ?? [];
    assert.deepEqual(params.map((p) => [p.name, p.in, p.required]), [["top_k", "query", false], ["q", "query", true]]);
    assert.deepEqual(params[0].schema, { default: 10, type: "integer", minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER });
  });

  it("gives 204s and redirects no body, event streams text/event-stream", () => {
    const doc = documentOf((routes) => {
      routes.delete("/things/:id", { summary: "s", returns: "Deleted", status: 204, params: z.object({ id: z.string() }) }, ok);
      routes.get("/back", { summary: "s", returns: "Redirects", status: 302, public: true }, ok);
      routes.post("/pull", { summary: "s", returns: "Events", sse: true }, ok);
    });
    assert.equal(doc.paths["/things/{id}"]?.delete?.responses["204"].content, undefined);
    assert.equal(doc.paths["/back"]?.get?.responses["302"].content, undefined);
    assert.deepEqual(Object.keys(doc.paths["/pull"]?.post?.responses["200"].content ?? {}), ["text/event-stream"]);
  });

  it("refuses a route whose params schema does not describe exactly its path parameters", () => {
    assert.throws(
      () => documentOf((routes) => routes.get("/things/:id", { summary: "s", returns: "r" }, ok)),
      /GET \/things\/:id: its params schema must describe exactly the path parameters id/,
    );
    assert.throws(
      () => documentOf((routes) => routes.get("/things/:id", { summary: "s", returns: "r", params: z.object({ id: z.string(), other: z.string() }) }, ok)),
      /params schema must describe exactly/,
    );
  });

  it("refuses the same method and path described twice", () => {
    assert.throws(
      () =>
        documentOf((routes) => {
          routes.get("/things", { summary: "s", returns: "r" }, ok);
          routes.get("/things", { summary: "s", returns: "r" }, ok);
        }),
      /GET \/things is described twice/,
    );
  });

  it("finds only documented routers: a plain router's routes are not in it (the integration test catches those)", () => {
    const plain = express.Router();
    plain.get("/plain", (_req, res) => {
      res.end();
    });
    const api = express.Router();
    api.use(plain);
    assert.deepEqual(openApiDocument(api).paths, {});
  });
});
