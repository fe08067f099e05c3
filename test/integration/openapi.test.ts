import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import express, { type Express, type Router } from "express";
import { loadConfig } from "../../server/config";
import { documentedRouter } from "../../server/routing/documented-router";
import { openApiDocument, type OpenApiDocument, type Operation } from "../../server/http/openapi";
import { createLogger } from "../../server/logger";
import { startServer, type RunningServer } from "../../server/server";
import { client, signUp, type Request } from "../fixtures/http-client";
import { tempDir } from "../fixtures/sluice-server";

// The server runs in this process (startServer, as `npm start` runs it), so the Express router
// stack of its app can be walked; it is reached over a real socket like the spawned servers.

const ROOT = path.resolve(__dirname, "..", "..", __filename.endsWith(".ts") ? "" : "..");

let app: Express;
let server: RunningServer;
let request: Request;
let doc: OpenApiDocument;
let token: string;
const dataDir = tempDir("sluice-openapi-");

before(async () => {
  const config = loadConfig({ DATA_DIR: dataDir, PORT: "0", HOST: "127.0.0.1", SLUICE_SECRETS: "file", OLLAMA_HOST: "http://127.0.0.1:9" });
  server = await startServer(config, createLogger("error"));
  app = server.app;
  request = client(`${server.url}/api`);
  const res = await request("GET", "/openapi.json");
  assert.equal(res.status, 200, res.text);
  assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
  doc = res.body;
  token = (await signUp(request, "openapi")).token;
});

after(async () => {
  await server.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

interface Layer {
  route?: { path: unknown; methods: Record<string, boolean> };
  handle: { stack?: Layer[] };
  rawPath?: unknown;
}

/** Every route registered on the app, as "METHOD /path" with {name} parameters, found by walking Express 5's router stack. */
function registeredRoutes(stack: Layer[], prefix = ""): string[] {
  return stack.flatMap((layer) => {
    if (layer.route) {
      assert.equal(typeof layer.route.path, "string", "routes are registered with string paths");
      const routePath = `${prefix}${layer.route.path as string}`.replace(/:(\w+)/g, "{$1}");
      return Object.keys(layer.route.methods).map((method) => `${method.toUpperCase()} ${routePath}`);
    }
    if (!layer.handle.stack) return [];
    assert.equal(typeof layer.rawPath, "string", "routers are mounted at string paths");
    const mountedAt = layer.rawPath === "/" ? "" : (layer.rawPath as string);
    return registeredRoutes(layer.handle.stack, prefix + mountedAt);
  });
}

const appRoutes = () => registeredRoutes((app.router as unknown as { stack: Layer[] }).stack);

/** Every operation of a document, as "METHOD /path" under its server URL. */
function documentedRoutes(document: OpenApiDocument): string[] {
  const base = document.servers[0].url;
  return Object.entries(document.paths).flatMap(([p, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${base}${p}`));
}

/** The app's /api router, as mounted by createApp. */
function apiRouter(): Router {
  const layer = (app.router as unknown as { stack: Array<Layer & { handle: Router }> }).stack.find((l) => l.rawPath === "/api");
  assert.ok(layer, "the API router is mounted at /api");
  return layer.handle;
}

/** Added to the /api router for one check, then taken off again so the other checks see the real app. */
async function withExtraRouter<T>(router: Router, check: () => Promise<T> | T): Promise<T> {
  const api = apiRouter();
  const before = api.stack.length;
  api.use(router);
  try {
    return await check();
  } finally {
    api.stack.splice(before);
  }
}

const sorted = (list: string[]) => [...list].sort();
const missingFrom = (list: string[], other: string[]) => list.filter((r) => !other.includes(r));

function operations(document: OpenApiDocument): Array<{ method: string; path: string; op: Operation }> {
  return Object.entries(document.paths).flatMap(([p, item]) =>
    Object.entries(item).map(([method, op]) => ({ method: method.toUpperCase(), path: p, op: op as Operation })),
  );
}

/** Operations that end the caller's own account: probed with an account of their own, so the shared one lives on. */
const ENDS_THE_ACCOUNT = new Set(["DELETE /users/me"]);

/** A request to a documented operation: dummy path parameters, a JSON body `{}` where it takes one. */
async function probe(method: string, documentedPath: string, op: Operation, withToken: boolean) {
  const filled = documentedPath.replace(/\{(\w+)\}/g, (_m, name: string) => `probe-${name}`);
  const caller = withToken && ENDS_THE_ACCOUNT.has(`${method} ${documentedPath}`) ? (await signUp(request, "openapi-throwaway")).token : token;
  return request(method, filled, { token: withToken ? caller : undefined, body: op.requestBody ? {} : undefined });
}

/** The catch-all answer of /api for a route that does not exist (error.middleware.ts notFound). */
const isCatchAll = (res: { status: number; body: unknown }) => res.status === 404 && JSON.stringify(res.body) === JSON.stringify({ detail: "Not found" });

describe("GET /api/openapi.json", () => {
  it("answers the OpenAPI 3.1 document without authentication: title Sluice, the package's version, servers relative to /api", () => {
    assert.match(doc.openapi, /^3\.1\.\d+$/);
    assert.equal(doc.info.title, "Sluice");
    assert.equal(doc.info.version, JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")).version);
    assert.deepEqual(doc.servers, [{ url: "/api" }]);
  });

  it("names the bearer token and the access_token cookie as the ways to authenticate", () => {
    assert.deepEqual(doc.components.securitySchemes.bearer, { type: "http", scheme: "bearer", bearerFormat: "JWT", description: doc.components.securitySchemes.bearer.description });
    assert.equal(doc.components.securitySchemes.cookie.in, "cookie");
    assert.equal(doc.components.securitySchemes.cookie.name, "access_token");
    assert.deepEqual(doc.security, [{ bearer: [] }, { cookie: [] }]);
  });

  it("is OpenAPI 3.1 in shape: every operation has responses, every $ref resolves, path parameters match the path", () => {
    const operationIds = new Set<string>();
    for (const { method, path: p, op } of operations(doc)) {
      const where = `${method} ${p}`;
      assert.ok(op.summary, `${where} has a summary`);
      assert.ok(op.tags.length === 1 && doc.tags.some((t) => t.name === op.tags[0]), `${where} has a declared tag`);
      assert.ok(!operationIds.has(op.operationId), `${where}: operationId ${op.operationId} is unique`);
      operationIds.add(op.operationId);
      const statuses = Object.keys(op.responses);
      assert.ok(statuses.length > 0, `${where} has responses`);
      assert.ok(statuses.some((s) => /^[23]\d\d$/.test(s)), `${where} has a success response`);
      for (const [status, response] of Object.entries(op.responses)) {
        assert.match(status, /^[1-5]\d\d$/, `${where}: status ${status}`);
        assert.ok(response.description, `${where} ${status} has a description`);
      }
      const inPath = [...p.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      const declared = (op.parameters ?? []).filter((param) => param.in === "path");
      assert.deepEqual(declared.map((param) => param.name).sort(), [...inPath].sort(), `${where}: path parameters`);
      for (const param of declared) assert.equal(param.required, true, `${where}: path parameter ${param.name} is required`);
      for (const param of op.parameters ?? []) assert.ok(param.schema && typeof param.schema === "object", `${where}: ${param.name} has a schema`);
      for (const scheme of op.security ?? []) for (const name of Object.keys(scheme)) assert.ok(doc.components.securitySchemes[name], `${where}: scheme ${name}`);
    }

    const refs: string[] = [];
    const collect = (value: unknown): void => {
      if (Array.isArray(value)) value.forEach(collect);
      else if (value && typeof value === "object") {
        for (const [key, inner] of Object.entries(value)) {
          if (key === "$ref") refs.push(inner as string);
          else collect(inner);
        }
      }
    };
    collect(doc);
    assert.ok(refs.length > 0, "the error responses refer to the shared error schema");
    for (const ref of refs) {
      assert.match(ref, /^#\//, `${ref} is local`);
      const target = ref
        .slice(2)
        .split("/")
        .reduce<unknown>((at, part) => (at as Record<string, unknown> | undefined)?.[part.replace(/~1/g, "/").replace(/~0/g, "~")], doc);
      assert.ok(target && typeof target === "object", `${ref} resolves`);
    }
  });

  it("describes request bodies and query parameters from the zod schemas, as clients send them", () => {
    const signup = doc.paths["/signup"]?.post;
    const body = signup?.requestBody?.content["application/json"].schema as { required: string[]; properties: Record<string, { minLength?: number }> };
    assert.deepEqual(body.required, ["email", "password"]);
    assert.equal(body.properties.password.minLength, 8);
    // top_k has a default and group_by, type and folder are optional, so a client may leave them out; q may not.
    const search = doc.paths["/collections/{id}/search"]?.get?.parameters ?? [];
    assert.deepEqual(
      search.map((p) => [p.name, p.in, p.required]),
      [["id", "path", true], ["q", "query", true], ["top_k", "query", false], ["group_by", "query", false], ["type", "query", false], ["folder", "query", false], ["mode", "query", false]],
    );
    assert.equal(search[2].schema.default, 10);
    assert.deepEqual(search[6].schema.enum, ["keyword", "semantic", "hybrid"]);
  });

  it("says in the password's description that every byte counts (pre-hashed before bcrypt), and documents the sign-up and sign-in 429", () => {
    const signup = doc.paths["/signup"]?.post;
    const body = signup?.requestBody?.content["application/json"].schema as { properties: Record<string, { description?: string }> };
    assert.match(body.properties.password.description ?? "", /HMAC-SHA256 before bcrypt \(cost 12\), so nothing beyond bcrypt's 72-byte limit is cut off/);
    assert.match(signup?.responses["429"]?.description ?? "", /Too many sign-ups from this address/);
    assert.match(doc.paths["/signin"]?.post?.responses["429"]?.description ?? "", /Retry-After/);
  });

  it("answers every error with the shared {detail, errors?} schema, and says what each status means", () => {
    assert.deepEqual(doc.components.schemas.Error.required, ["detail"]);
    const create = doc.paths["/user_groups"]?.post;
    assert.ok(create);
    assert.deepEqual(Object.keys(create.responses), ["201", "400", "401", "409", "413", "422"]);
    assert.equal(create.responses["409"].content?.["application/json"].schema?.$ref, "#/components/schemas/Error");
    assert.match(create.responses["409"].description, /group of that name/);
    assert.ok(doc.paths["/models"]?.post?.responses["200"].content?.["text/event-stream"], "the pull answers an event stream");
  });
});

describe("the document and the app's routes", () => {
  it("lists every route the app registers (kind routers included), and only those, with the same method and path", () => {
    const registered = appRoutes();
    const documented = documentedRoutes(doc);
    assert.deepEqual(missingFrom(registered, documented), [], "registered but not documented");
    assert.deepEqual(missingFrom(documented, registered), [], "documented but not registered");
    assert.deepEqual(sorted(registered), sorted(documented));
    // The kind routers are among them: SMB, folder and Drive, the Drive callback mounted before authentication.
    for (const route of ["POST /api/data_sources/smb/{group_id}", "POST /api/data_sources/folder/{group_id}", "GET /api/integrations/cloud/drive/callback"]) {
      assert.ok(registered.includes(route), route);
    }
  });

  it("catches a route registered without a description", async () => {
    const plain = express.Router();
    plain.post("/data_sources/ftp/:group_id", (_req, res) => {
      res.status(201).end();
    });
    const undocumented = await withExtraRouter(plain, () => missingFrom(appRoutes(), documentedRoutes(doc)));
    assert.deepEqual(undocumented, ["POST /api/data_sources/ftp/{group_id}"]);
    assert.deepEqual(missingFrom(appRoutes(), documentedRoutes(doc)), [], "the throwaway route is gone again");
  });

  it("every documented operation is reachable: none answers the catch-all 404", async () => {
    for (const { method, path: p, op } of operations(doc)) {
      const res = await probe(method, p, op, true);
      assert.ok(!isCatchAll(res), `${method} ${p} answered the catch-all 404`);
    }
  });

  it("catches a documented route that cannot be reached (mounted behind the catch-all)", async () => {
    const late = documentedRouter("Throwaway");
    late.get("/throwaway", { summary: "Never reached", returns: "Nothing" }, (_input, _req, res) => {
      res.json({});
    });
    await withExtraRouter(late.router, async () => {
      const withLate = openApiDocument(apiRouter());
      const op = withLate.paths["/throwaway"]?.get;
      assert.ok(op, "the late router is in a document built now");
      assert.ok(isCatchAll(await probe("GET", "/throwaway", op, true)));
    });
  });

  it("secures exactly the operations it says: 401 without a token, public ones answer without", async () => {
    for (const { method, path: p, op } of operations(doc)) {
      const res = await probe(method, p, op, false);
      const isPublic = Array.isArray(op.security) && op.security.length === 0;
      if (isPublic) assert.notEqual(res.status, 401, `${method} ${p} is documented as public: ${res.text}`);
      else {
        assert.equal(res.status, 401, `${method} ${p} is documented as signed-in: ${res.text}`);
        assert.ok(op.responses["401"], `${method} ${p} documents its 401`);
      }
    }
  });

  it("the documented body and query schemas are the ones enforced: leaving out their required fields answers 422 naming them", async () => {
    let checked = 0;
    for (const { method, path: p, op } of operations(doc)) {
      const bodyRequired = ((op.requestBody?.content["application/json"].schema as { required?: string[] } | undefined)?.required ?? []);
      const queryRequired = (op.parameters ?? []).filter((param) => param.in === "query" && param.required).map((param) => param.name);
      const required = [...bodyRequired, ...queryRequired];
      if (required.length === 0) continue;
      const res = await probe(method, p, op, true);
      assert.equal(res.status, 422, `${method} ${p}: ${res.text}`);
      const fields = (res.body.errors as Array<{ field: string }>).map((e) => e.field.split(".")[0]);
      assert.deepEqual(sorted([...new Set(fields)]), sorted(required), `${method} ${p}`);
      assert.ok(op.responses["422"], `${method} ${p} documents its 422`);
      checked++;
    }
    assert.ok(checked >= 10, `checked ${checked} operations with required input`);
  });
});
