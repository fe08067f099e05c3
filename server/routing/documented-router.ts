import { Router, type RequestHandler } from "express";
import type { z } from "zod";

export type Method = "get" | "post" | "put" | "delete";

/** What one route tells API clients; http/openapi.ts builds the OpenAPI document from these. */
export interface RouteDescription {
  summary: string;
  /** What the success response carries (or does), one line. */
  returns: string;
  /** The success status; 200 when not given. */
  status?: number;
  /** The schemas the handler parses; the document shows them as the client's input. */
  params?: z.ZodObject;
  query?: z.ZodObject;
  body?: z.ZodType;
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

export interface DescribedRoute extends RouteDescription {
  method: Method;
  /** As registered with Express (`/user_groups/:id`). */
  path: string;
  /** The resource the route belongs to (an OpenAPI tag). */
  tag: string;
}

export interface DocumentedRouter {
  readonly router: Router;
  get(path: string, description: RouteDescription, ...handlers: RequestHandler[]): void;
  post(path: string, description: RouteDescription, ...handlers: RequestHandler[]): void;
  put(path: string, description: RouteDescription, ...handlers: RequestHandler[]): void;
  delete(path: string, description: RouteDescription, ...handlers: RequestHandler[]): void;
}

// Keyed by the Express router, so routers travel as plain Routers (KindRoutes, app.use) and the document finds them where they are mounted.
const descriptions = new WeakMap<object, DescribedRoute[]>();

/**
 * An Express router whose every route is registered together with its description: a route
 * cannot be added through it without one. A route added to a plain Router is missing from the
 * document, which test/integration/openapi.test.ts catches.
 */
export function documentedRouter(tag: string): DocumentedRouter {
  const router = Router();
  const routes: DescribedRoute[] = [];
  descriptions.set(router, routes);
  const register =
    (method: Method) =>
    (path: string, description: RouteDescription, ...handlers: RequestHandler[]): void => {
      routes.push({ ...description, method, path, tag });
      router[method](path, ...handlers);
    };
  return { router, get: register("get"), post: register("post"), put: register("put"), delete: register("delete") };
}

/** The routes of a router made by documentedRouter, in registration order; undefined for any other handler. */
export function describedRoutes(handler: unknown): readonly DescribedRoute[] | undefined {
  return typeof handler === "function" ? descriptions.get(handler) : undefined;
}
