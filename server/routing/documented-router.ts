import { Router, type Request, type RequestHandler, type Response } from "express";
import type { z } from "zod";
import { ValidationError, type FieldError } from "../errors";
import { parsePart } from "./validate";

export type Method = "get" | "post" | "put" | "delete";

type PartSchema = z.ZodObject | undefined;
type BodySchema = z.ZodType | undefined;

/** What one route tells API clients; http/openapi.ts builds the OpenAPI document from these. */
export interface RouteDescription<P extends PartSchema = PartSchema, Q extends PartSchema = PartSchema, B extends BodySchema = BodySchema> {
  summary: string;
  /** What the success response carries (or does), one line. */
  returns: string;
  /** The success status; 200 when not given. */
  status?: number;
  /** The schemas the router parses the request with; the document shows them as the client's input. */
  params?: P;
  query?: Q;
  body?: B;
  /**
   * The error statuses this route answers, each with what it means here. The ones every route of
   * a sort shares are added by openapi.ts: 401 (signed-in routes), 422 (a schema), 400/413 (a body).
   */
  errors?: Record<number, string>;
  /** Reachable without a token; every other route sits behind authentication. */
  public?: boolean;
  /** Answers a Server-Sent Events stream instead of JSON. */
  sse?: boolean;
}

/** A part's parsed value as its schema outputs it; undefined for a part the route declares no schema for. */
type Parsed<S> = S extends z.ZodType ? z.output<S> : undefined;

/** The request as the route's schemas parsed it: the handler's typed input. */
export interface RouteInput<P extends PartSchema, Q extends PartSchema, B extends BodySchema> {
  params: Parsed<P>;
  query: Parsed<Q>;
  body: Parsed<B>;
}

/** The last handler of a route: it runs only once params, query and body have passed their schemas. */
export type RouteHandler<P extends PartSchema, Q extends PartSchema, B extends BodySchema> = (
  input: RouteInput<P, Q, B>,
  req: Request,
  res: Response,
) => void | Promise<void>;

export interface DescribedRoute extends RouteDescription {
  method: Method;
  /** As registered with Express (`/user_groups/:id`). */
  path: string;
  /** The resource the route belongs to (an OpenAPI tag). */
  tag: string;
}

/** Registers a route: its description, any middleware (authentication, rate limits), then its handler. */
type Register = <P extends PartSchema = undefined, Q extends PartSchema = undefined, B extends BodySchema = undefined>(
  path: string,
  description: RouteDescription<P, Q, B>,
  ...handlers: [...RequestHandler[], RouteHandler<P, Q, B>]
) => void;

export interface DocumentedRouter {
  readonly router: Router;
  get: Register;
  post: Register;
  put: Register;
  delete: Register;
}

// Keyed by the Express router, so routers travel as plain Routers (KindRoutes, app.use) and the document finds them where they are mounted.
const descriptions = new WeakMap<object, DescribedRoute[]>();

/**
 * Parses every part the route declares a schema for, once, after its middleware has run. All the
 * parts' field errors answer together as one 422, so a client learns everything wrong at once.
 */
function parseRequest<P extends PartSchema, Q extends PartSchema, B extends BodySchema>(description: RouteDescription<P, Q, B>, req: Request): RouteInput<P, Q, B> {
  const input: Record<"params" | "query" | "body", unknown> = { params: undefined, query: undefined, body: undefined };
  const errors: FieldError[] = [];
  for (const location of ["params", "query", "body"] as const) {
    const schema = description[location];
    if (!schema) continue;
    const parsed = parsePart(schema, req[location], location);
    if (parsed.ok) input[location] = parsed.value;
    else errors.push(...parsed.errors);
  }
  if (errors.length > 0) throw new ValidationError(errors);
  return input as unknown as RouteInput<P, Q, B>;
}

/**
 * An Express router whose every route is registered together with its description: a route
 * cannot be added through it without one, and its handler gets the request as the described
 * schemas parsed it. A route added to a plain Router is missing from the document, which
 * test/integration/openapi.test.ts catches.
 */
export function documentedRouter(tag: string): DocumentedRouter {
  const router = Router();
  const routes: DescribedRoute[] = [];
  descriptions.set(router, routes);
  const register =
    (method: Method): Register =>
    (path, description, ...handlers) => {
      routes.push({ ...description, method, path, tag });
      const middleware = handlers.slice(0, -1) as RequestHandler[];
      const handler = handlers.at(-1) as RouteHandler<PartSchema, PartSchema, BodySchema>;
      // Express 5 passes a rejected promise to the error middleware.
      const run: RequestHandler = async (req, res) => {
        await handler(parseRequest(description, req), req, res);
      };
      router[method](path, ...middleware, run);
    };
  return { router, get: register("get"), post: register("post"), put: register("put"), delete: register("delete") };
}

/** The routes of a router made by documentedRouter, in registration order; undefined for any other handler. */
export function describedRoutes(handler: unknown): readonly DescribedRoute[] | undefined {
  return typeof handler === "function" ? descriptions.get(handler) : undefined;
}
