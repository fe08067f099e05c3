import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import express from "express";
import { z } from "zod";
import { documentedRouter } from "../../server/routing/documented-router";
import { ID, NO_SUCH_ID } from "../../server/routing/common.schemas";
import { parsePart } from "../../server/routing/validate";
import { errorHandler } from "../../server/http/error.middleware";
import type { Logger } from "../../server/logger";

const seen: unknown[] = [];
let base = "";
let close: () => void;

before(async () => {
  const routes = documentedRouter("Things");
  const order: string[] = [];
  routes.put(
    "/things/:id",
    { summary: "s", returns: "r", params: z.object({ id: ID }), query: z.object({ n: z.coerce.number().int().default(1) }), body: z.object({ name: z.string().trim() }) },
    (req, res, next) => {
      // Middleware runs before the schemas: a refused caller never reaches validation.
      order.push("middleware");
      if (req.headers["x-refuse"]) res.status(401).json({ detail: "no" });
      else next();
    },
    ({ params, query, body }, _req, res) => {
      order.push("handler");
      seen.push({ params, query, body });
      res.json({ id: params.id, n: query.n + 1, name: body.name.toUpperCase(), order });
    },
  );
  const app = express();
  app.use(express.json());
  app.use(routes.router);
  app.use(errorHandler({ error() {}, info() {}, warn() {}, debug() {} } as unknown as Logger));
  const server = app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  close = () => server.close();
});

after(() => close());

const put = (path: string, body?: unknown, headers: Record<string, string> = {}) =>
  fetch(`${base}${path}`, { method: "PUT", headers: { "content-type": "application/json", ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });

describe("documentedRouter", () => {
  it("hands the handler params, query and body as the schemas output them", async () => {
    const id = "3F2C1E9A-8B7D-4C6E-9F01-23456789ABCD";
    const res = await put(`/things/${id}?n=41`, { name: "  kite ", extra: true });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { id: id.toLowerCase(), n: 42, name: "KITE", order: ["middleware", "handler"] });
    // Unknown keys are stripped and defaults filled: what the handler got is the parsed value, not req.body.
    assert.deepEqual(seen.at(-1), { params: { id: id.toLowerCase() }, query: { n: 41 }, body: { name: "kite" } });
    const defaulted = await put(`/things/${NO_SUCH_ID}`, { name: "a" });
    assert.equal(((await defaulted.json()) as { n: number }).n, 2);
  });

  it("answers one 422 with the errors of every part, and never calls the handler", async () => {
    const before = seen.length;
    const res = await put("/things/3f2c1e9a-8b7d-4c6e-9f01-23456789abcd?n=1.5", { name: 3 });
    assert.equal(res.status, 422);
    const body = (await res.json()) as { detail: string; errors: unknown };
    assert.deepEqual(body.errors, [
      { field: "n", message: "must be a whole number, not 1.5" },
      { field: "name", message: "must be a string, not a number" },
    ]);
    assert.equal(body.detail, "Invalid request: n must be a whole number, not 1.5; name must be a string, not a number");
    assert.equal(seen.length, before);
  });

  it("runs the middleware first: a refused request is not validated", async () => {
    const res = await put("/things/not-a-uuid", undefined, { "x-refuse": "1" });
    assert.equal(res.status, 401);
  });

  it("refuses NUL in any parsed string, a path id included", async () => {
    const res = await put("/things/a%00b", { name: "x\u0000y" });
    assert.equal(res.status, 422);
    assert.deepEqual(((await res.json()) as { errors: unknown }).errors, [
      { field: "id", message: "must not contain NUL characters" },
      { field: "name", message: "must not contain NUL characters" },
    ]);
  });
});

describe("ID", () => {
  it("takes any RFC 9562 UUID in either case, lowercased; anything else becomes the nil UUID no row has", () => {
    for (const uuid of ["3f2c1e9a-8b7d-4c6e-9f01-23456789abcd", "6BA7B810-9DAD-11D1-80B4-00C04FD430C8", "017f22e2-79b0-7cc3-98c4-dc0c0c07398f", NO_SUCH_ID]) {
      assert.equal(ID.parse(uuid), uuid.toLowerCase());
    }
    for (const odd of ["nope", "1", " 3f2c1e9a-8b7d-4c6e-9f01-23456789abcd", "3f2c1e9a8b7d4c6e9f0123456789abcd", "3f2c1e9a-8b7d-4c6e-9f01-23456789abcde", "x".repeat(3000)]) {
      assert.equal(ID.parse(odd), NO_SUCH_ID, odd);
    }
  });
});

describe("request messages", () => {
  const messages = (schema: z.ZodType, value: unknown, location: "body" | "query" | "params" = "body") => {
    const parsed = parsePart(schema, value, location);
    assert.equal(parsed.ok, false);
    return parsed.ok ? [] : parsed.errors.map((e) => `${e.field} ${e.message}`);
  };

  it("says which fields a missing or non-object body should have", () => {
    const body = z.object({ name: z.string(), note: z.string().optional() });
    assert.deepEqual(messages(body, undefined), ["body is required: send a JSON object with name, and optionally note (Content-Type: application/json)"]);
    assert.deepEqual(messages(body, "name"), ["body must be a JSON object with name, and optionally note"]);
    assert.deepEqual(messages(z.object({ a: z.string(), b: z.string(), c: z.string() }), 5), ["body must be a JSON object with a, b and c"]);
  });

  it("puts each kind of zod issue in words that follow the field's name", () => {
    const schema = z.object({
      name: z.string().min(2).max(4),
      empty: z.string().min(1),
      count: z.number().int().min(1).max(9),
      ratio: z.number().gt(0).lt(1),
      flag: z.boolean(),
      kind: z.enum(["a", "b"]),
      exact: z.literal("yes"),
      tags: z.array(z.string()).min(1).max(2),
      uuid: z.uuid(),
      email: z.email(),
      step: z.number().multipleOf(5),
    });
    assert.deepEqual(
      messages(schema, { name: "a", empty: "", count: 1.5, ratio: 1, flag: "true", kind: "c", exact: "no", tags: [], uuid: "nope", email: "ada", step: 7 }),
      [
        "name must be at least 2 characters",
        "empty must not be empty",
        "count must be a whole number, not 1.5",
        "ratio must be less than 1",
        "flag must be true or false, not a string",
        "kind must be one of a, b",
        'exact must be "yes"',
        "tags must list at least 1 item",
        "uuid must be a UUID such as 3f2c1e9a-8b7d-4c6e-9f01-23456789abcd",
        "email must be an email address such as ada@example.com",
        "step must be a multiple of 5",
      ],
    );
    assert.deepEqual(messages(schema.pick({ name: true, count: true, tags: true }), { name: "abcde", count: 10, tags: ["a", "b", "c"] }), [
      "name must be at most 4 characters",
      "count must be at most 9",
      "tags must list at most 2 items",
    ]);
    assert.deepEqual(messages(schema.pick({ name: true, flag: true }), {}), ["name is required", "flag is required"]);
    assert.deepEqual(messages(z.strictObject({ a: z.string().optional(), b: z.string().optional() }), { c: 1, d: 2 }), ["body does not take c, d: it takes a and b"]);
    assert.deepEqual(messages(z.object({ n: z.coerce.number() }), { n: "ten" }, "query"), ["n must be a number"]);
  });

  it("leaves a schema's own message alone", () => {
    assert.deepEqual(messages(z.object({ name: z.string().min(1, "is required") }), { name: "" }), ["name is required"]);
  });
});
