import type { z } from "zod";
import { ValidationError } from "../errors";

type Location = "body" | "query" | "params";

/** Parses one part of a request with its schema; failures become 422 with a field list (docs/decisions.md: Wire conventions). */
export function parse<S extends z.ZodType>(schema: S, value: unknown, location: Location): z.infer<S> {
  const result = schema.safeParse(value ?? (location === "body" ? undefined : {}));
  if (result.success) return result.data;
  throw new ValidationError(
    result.error.issues.map((issue) => ({
      field: issue.path.length ? issue.path.join(".") : location,
      message: issue.message,
    })),
  );
}
