import type { z } from "zod";
import { ValidationError, type FieldError } from "../errors";

type Location = "body" | "query" | "params";

/** Parses one part of a request with its schema; failures become 422 with a field list (docs/decisions.md: Wire conventions). */
export function parse<S extends z.ZodType>(schema: S, value: unknown, location: Location): z.infer<S> {
  const result = schema.safeParse(value ?? (location === "body" ? undefined : {}));
  if (!result.success) {
    throw new ValidationError(
      result.error.issues.map((issue) => ({
        field: issue.path.length ? issue.path.join(".") : location,
        message: issue.message,
      })),
    );
  }
  const nul = fieldsWithNul(result.data, location);
  if (nul.length > 0) throw new ValidationError(nul);
  return result.data;
}

/**
 * Every parsed string holding a NUL character, as a field error. PostgreSQL text cannot hold
 * NUL (it refuses the whole query), so no id, name or text of ours can carry one: refusing it
 * here, for every route, makes both back ends answer the same 422 (docs/decisions.md: HTTP).
 * Walks what the schema kept, iteratively, so no input nests deep enough to matter.
 */
function fieldsWithNul(data: unknown, location: Location): FieldError[] {
  const errors: FieldError[] = [];
  const pending: { value: unknown; path: (string | number)[] }[] = [{ value: data, path: [] }];
  while (pending.length > 0) {
    const { value, path } = pending.pop()!;
    if (typeof value === "string") {
      if (value.includes("\0")) errors.push({ field: path.length ? path.join(".") : location, message: "must not contain NUL characters" });
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
