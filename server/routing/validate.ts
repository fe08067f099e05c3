import type { z } from "zod";
import type { FieldError } from "../errors";
import { requestMessages, type Location } from "./request-messages";

const NUL_MESSAGE = "must not contain NUL characters";

/** What parsing one part of a request gives: its value, or the field errors it answers 422 with. */
export type PartResult<T> = { ok: true; value: T } | { ok: false; errors: FieldError[] };

/** Parses one part of a request with its schema (docs/decisions/0003-wire-conventions.md); the router calls it, routes never do. */
export function parsePart<S extends z.ZodType>(schema: S, value: unknown, location: Location): PartResult<z.output<S>> {
  const result = schema.safeParse(value ?? (location === "body" ? undefined : {}), { error: requestMessages(location) });
  if (!result.success) {
    return {
      ok: false,
      errors: result.error.issues.map((issue) => ({ field: issue.path.length ? issue.path.join(".") : location, message: issue.message })),
    };
  }
  const nul = fieldsWithNul(result.data, location);
  return nul.length > 0 ? { ok: false, errors: nul } : { ok: true, value: result.data };
}

/**
 * Every parsed string holding a NUL character, as a field error. PostgreSQL text cannot hold
 * NUL (it refuses the whole query), so no id, name or text of ours can carry one: refusing it
 * here, for every route, makes both back ends answer the same 422 (docs/decisions/0007-http-rules.md).
 * Walks what the schema kept, iteratively, so no input nests deep enough to matter.
 */
function fieldsWithNul(data: unknown, location: Location): FieldError[] {
  const errors: FieldError[] = [];
  const pending: { value: unknown; path: (string | number)[] }[] = [{ value: data, path: [] }];
  while (pending.length > 0) {
    const { value, path } = pending.pop()!;
    if (typeof value === "string") {
      if (value.includes("\0")) errors.push({ field: path.length ? path.join(".") : location, message: NUL_MESSAGE });
    } else if (Array.isArray(value)) {
      value.forEach((item, i) => {
        pending.push({ value: item, path: [...path, i] });
      });
    } else if (value !== null && typeof value === "object") {
      for (const [key, item] of Object.entries(value)) pending.push({ value: item, path: [...path, key] });
    }
  }
  return errors.reverse();
}
