import fs from "node:fs";
import path from "node:path";
import type { Router } from "express";
import { z } from "zod";
import { describedRoutes, type DescribedRoute } from "../routing/documented-router";

/** The parts of an OpenAPI 3.1 document this file writes (https://spec.openapis.org/oas/v3.1.0). */
type JsonSchema = Record<string, unknown>;

interface Parameter {
  name: string;
  in: "path" | "query";
  required: boolean;
  schema: JsonSchema;
}

interface Response {
  description: string;
  content?: Record<string, { schema?: JsonSchema }>;
}

export interface Operation {
  tags: string[];
  summary: string;
  operationId: string;
  parameters?: Parameter[];
  requestBody?: { required: true; content: { "application/json": { schema: JsonSchema } } };
  responses: Record<string, Response>;
  /** [] on public operations; the document's default (bearer or cookie) otherwise. */
  security?: Array<Record<string, string[]>>;
}

export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string; description: string };
  servers: Array<{ url: string }>;
  tags: Array<{ name: string }>;
  security: Array<Record<string, string[]>>;
  paths: Record<string, Partial<Record<string, Operation>>>;
  components: { schemas: Record<string, JsonSchema>; securitySchemes: Record<string, JsonSchema> };
}

const PACKAGE_JSON = path.resolve(__dirname, __filename.endsWith(".ts") ? "../.." : "../../..", "package.json");

/** Every error answer of the API (error.middleware.ts): `detail`, and `errors` per field on a 422. */
const errorBody = z.object({
  detail: z.string().describe("What went wrong and, where the client can, what to do about it"),
  errors: z
    .array(z.object({ field: z.string().describe("Dotted path of the field, or body/query/params"), message: z.string() }))
    .optional()
    .describe("The fields a 422 rejected"),
});
const ERROR_REF = "#/components/schemas/Error";

/** The statuses whole sorts of routes answer, so no route has to repeat them. */
const SIGNED_IN_ERRORS = { 401: "Not signed in, or the token is invalid or expired: sign in again" };
const SCHEMA_ERRORS = { 422: "The request does not match its schema; `errors` lists each field and what is wrong" };
const BODY_ERRORS = { 400: "The body is not valid JSON", 413: "The body is larger than 1 MB" };

/** Express's `:name` path parameters in OpenAPI's `{name}` form; the only pattern syntax the routes use. */
export function openApiPath(expressPath: string): string {
  if (/[*?()[\]]|\{/.test(expressPath)) throw new Error(`${expressPath}: only :name parameters can be described`);
  return expressPath.replace(/:([A-Za-z0-9_]+)/g, "{$1}");
}

function pathParameterNames(openApi: string): string[] {
  return [...openApi.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
}

/** What a client sends: defaults make a field optional, so the input side is the one to show. */
function inputSchema(schema: z.ZodType): JsonSchema {
  const { $schema: _dialect, ...json } = z.toJSONSchema(schema, { io: "input" }) as JsonSchema;
  return json;
}

function objectFields(schema: z.ZodObject): { properties: Record<string, JsonSchema>; required: string[] } {
  const json = inputSchema(schema);
  return { properties: (json.properties ?? {}) as Record<string, JsonSchema>, required: (json.required ?? []) as string[] };
}

function parameters(route: DescribedRoute, openApi: string): Parameter[] {
  const names = pathParameterNames(openApi);
  const path = route.params ? objectFields(route.params) : { properties: {}, required: [] };
  if (Object.keys(path.properties).sort().join() !== [...names].sort().join()) {
    throw new Error(`${route.method.toUpperCase()} ${route.path}: its params schema must describe exactly the path parameters ${names.join(", ") || "(none)"}`);
  }
  const inPath = names.map((name): Parameter => ({ name, in: "path", required: true, schema: path.properties[name] }));
  const query = route.query ? objectFields(route.query) : { properties: {}, required: [] };
  const inQuery = Object.entries(query.properties).map(
    ([name, schema]): Parameter => ({ name, in: "query", required: query.required.includes(name), schema }),
  );
  return [...inPath, ...inQuery];
}

function successResponse(route: DescribedRoute): Response {
  const status = route.status ?? 200;
  if (route.sse) {
    return { description: route.returns, content: { "text/event-stream": { schema: { type: "string", description: "`data: <JSON object>` lines, one per event" } } } };
  }
  // No body on 204 and on redirects; JSON bodies are described in words, their shape is the presenters'.
  if (status === 204 || (status >= 300 && status < 400)) return { description: route.returns };
  return { description: route.returns, content: { "application/json": {} } };
}

function errorResponses(route: DescribedRoute): Record<string, Response> {
  const hasSchema = Boolean(route.params || route.query || route.body);
  const meanings = new Map<number, string[]>();
  const add = (errors: Record<number, string>) => {
    for (const [status, meaning] of Object.entries(errors)) meanings.set(Number(status), [...(meanings.get(Number(status)) ?? []), meaning]);
  };
  if (route.body) add(BODY_ERRORS);
  if (!route.public) add(SIGNED_IN_ERRORS);
  if (hasSchema) add(SCHEMA_ERRORS);
  add(route.errors ?? {});
  return Object.fromEntries(
    [...meanings.entries()]
      .sort(([a], [b]) => a - b)
      .map(([status, lines]) => [String(status), { description: lines.join("; "), content: { "application/json": { schema: { $ref: ERROR_REF } } } }]),
  );
}

function operation(route: DescribedRoute, openApi: string): Operation {
  const params = parameters(route, openApi);
  return {
    tags: [route.tag],
    summary: route.summary,
    // Stable names for generated clients: method and path, e.g. put_user_groups_id_members_email.
    operationId: `${route.method}${openApi.replace(/[{}]/g, "").replace(/[^A-Za-z0-9]+/g, "_")}`.replace(/_$/, ""),
    ...(params.length ? { parameters: params } : {}),
    ...(route.body ? { requestBody: { required: true, content: { "application/json": { schema: inputSchema(route.body) } } } } : {}),
    responses: { [String(route.status ?? 200)]: successResponse(route), ...errorResponses(route) },
    ...(route.public ? { security: [] } : {}),
  };
}

/**
 * The OpenAPI 3.1 document of the API router `api` (mounted at /api): the described routes of
 * every router mounted on it, in mount order. Built once at start-up (app.ts).
 */
export function openApiDocument(api: Router): OpenApiDocument {
  const routes = api.stack.flatMap((layer) => describedRoutes(layer.handle) ?? []);
  const paths: OpenApiDocument["paths"] = {};
  for (const route of routes) {
    const openApi = openApiPath(route.path);
    let item = paths[openApi];
    if (!item) {
      item = {};
      paths[openApi] = item;
    }
    if (item[route.method]) throw new Error(`${route.method.toUpperCase()} ${route.path} is described twice`);
    item[route.method] = operation(route, openApi);
  }
  const { version } = JSON.parse(fs.readFileSync(PACKAGE_JSON, "utf8")) as { version: string };
  return {
    openapi: "3.1.0",
    info: {
      title: "Sluice",
      version,
      description: "Documents from SMB shares, Google Drive and local folders in searchable collections, and a catalog of local language models.",
    },
    servers: [{ url: "/api" }],
    tags: [...new Set(routes.map((r) => r.tag))].map((name) => ({ name })),
    security: [{ bearer: [] }, { cookie: [] }],
    paths,
    components: {
      schemas: { Error: inputSchema(errorBody) },
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer", bearerFormat: "JWT", description: "The access_token from POST /signup or /signin" },
        cookie: { type: "apiKey", in: "cookie", name: "access_token", description: "The HttpOnly cookie sign-up and sign-in set" },
      },
    },
  };
}
