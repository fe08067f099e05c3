/**
 * The Sluice HTTP API as openapi-fetch generates it from the server's OpenAPI document: call
 * `api.GET("/collections")`, `api.POST("/user_groups", { body })`; paths, parameters and bodies are
 * type-checked against the document. Auth rides on the HttpOnly `access_token` cookie the server
 * sets at sign-up/sign-in, so no token is ever handled here. A failed request throws an ApiError.
 */
import createClient from "openapi-fetch";
import type { paths } from "./schema";

export interface FieldError {
  field: string;
  message: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly errors: FieldError[] = [],
    /** A machine-readable cause beside the detail (SMB checks: `logon_failure`, `timed_out`, ...), and what to do about it. */
    readonly reason: string | null = null,
    readonly hint: string | null = null,
    /** A 429's `Retry-After`, in seconds. */
    readonly retryAfterSeconds: number | null = null,
  ) {
    super(detail);
    this.name = "ApiError";
  }
}

/** What a person calls a request field: "group_name" is "Group name", "smb_source.port" is "Port". */
export function fieldLabel(field: string): string {
  const last = field.split(".").filter((part) => !/^\d+$/.test(part)).pop() ?? field;
  const words = last.replace(/_/g, " ").trim();
  return words ? words[0].toUpperCase() + words.slice(1) : "This field";
}

/**
 * Errors for display, one sentence per problem: a 422's field errors as "Email must be a valid
 * email address." (its detail repeats them in API words), else the server's detail, or a plain
 * sentence for network failures.
 */
export function errorMessage(error: unknown): string {
  if (error instanceof ApiError) {
    if (error.errors.length) return error.errors.map((e) => `${fieldLabel(e.field)} ${e.message.replace(/\.$/, "")}.`).join(" ");
    return error.detail;
  }
  if (error instanceof Error) return error.message;
  return String(error);
}

/** Called on any 401 so the app can fall back to the sign-in screen. */
let onUnauthorized: (() => void) | null = null;
export function setUnauthorizedHandler(handler: (() => void) | null): void {
  onUnauthorized = handler;
}

async function toApiError(res: Response): Promise<ApiError> {
  let detail = `Request failed (${res.status} ${res.statusText})`;
  let errors: FieldError[] = [];
  let reason: string | null = null;
  let hint: string | null = null;
  try {
    const body = (await res.json()) as { detail?: unknown; errors?: unknown; reason?: unknown; hint?: unknown };
    if (typeof body.detail === "string") detail = body.detail;
    if (Array.isArray(body.errors)) errors = body.errors as FieldError[];
    if (typeof body.reason === "string") reason = body.reason;
    if (typeof body.hint === "string") hint = body.hint;
  } catch {
    // Not JSON: keep the generic sentence.
  }
  const retryAfter = Number(res.headers.get("Retry-After") ?? Number.NaN);
  return new ApiError(res.status, detail, errors, reason, hint, Number.isFinite(retryAfter) ? retryAfter : null);
}

const BASE = "/api";
const AUTH_PATHS = new Set(["/signin", "/signup"]);
const PICKER_TOKEN_PATH = "/data_sources/drive/picker_token";

/** fetch for the generated client: a network failure or an error status becomes an ApiError, a 401 signs the app out. */
async function sendOrThrow(request: Request): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(request);
  } catch (error) {
    if ((error as Error).name === "AbortError") throw error;
    throw new ApiError(0, "Cannot reach the Sluice server");
  }
  if (!res.ok) {
    const error = await toApiError(res);
    const path = new URL(request.url).pathname.slice(BASE.length);
    // A dead Google Drive grant answers 401 on picker_token: the session itself is fine.
    const isDeadDriveGrant = path === PICKER_TOKEN_PATH && /drive/i.test(error.detail);
    if (res.status === 401 && !AUTH_PATHS.has(path) && !isDeadDriveGrant) onUnauthorized?.();
    throw error;
  }
  return res;
}

export const api = createClient<paths>({
  baseUrl: new URL(BASE, window.location.origin).href,
  credentials: "same-origin",
  headers: { Accept: "application/json" },
  fetch: sendOrThrow,
});

/** The answer's body: errors have been thrown by then, so only a success reaches here. */
export async function answer<T>(request: Promise<{ data?: T; response: Response }>): Promise<T> {
  const { data } = await request;
  return data as T;
}

/** Reads a text/event-stream body to its end, handing each `data:` event (JSON) to onEvent (EventSource cannot POST). */
export async function readEvents<T>(res: Response, onEvent: (event: T) => void): Promise<void> {
  if (!res.body) throw new ApiError(res.status, "The server sent no event stream");
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  const handleEvent = (block: string) => {
    const data = block
      .split(/\r?\n/)
      .filter((line) => line.startsWith("data:"))
      .map((line) => line.slice(5).replace(/^ /, ""))
      .join("\n");
    if (!data) return;
    let event: T;
    try {
      event = JSON.parse(data) as T;
    } catch {
      return;
    }
    onEvent(event);
  };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    // Events end with a blank line.
    for (let boundary = /\r?\n\r?\n/.exec(buffer); boundary; boundary = /\r?\n\r?\n/.exec(buffer)) {
      handleEvent(buffer.slice(0, boundary.index));
      buffer = buffer.slice(boundary.index + boundary[0].length);
    }
  }
  if (buffer.trim()) handleEvent(buffer);
}
