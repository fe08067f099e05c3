import { z } from "zod";

/** Where in a request a schema applies; a field error at the top names this. */
export type Location = "body" | "query" | "params";

/** An example a reader can copy the shape of (crypto.randomUUID's form). */
const EXAMPLE_UUID = "3f2c1e9a-8b7d-4c6e-9f01-23456789abcd";

/**
 * zod's error map for one part of a request: what to send, in words that follow the field's name
 * ("name is required", "top_k must be at most 100"), as ValidationError puts them in `detail`.
 * A message a schema gives itself wins over these; undefined leaves zod's own.
 */
export function requestMessages(location: Location): z.core.$ZodErrorMap {
  return (issue) => {
    const atTop = (issue.path ?? []).length === 0;
    switch (issue.code) {
      case "invalid_type":
        if (atTop && issue.inst instanceof z.ZodObject) return wholePart(location, issue.inst, issue.input);
        if (issue.input === undefined) return "is required";
        return `must be ${expected(issue.expected)}${received(issue)}`;
      case "too_small":
        return tooSmall(issue.origin, Number(issue.minimum), issue.inclusive !== false);
      case "too_big":
        return tooBig(issue.origin, Number(issue.maximum), issue.inclusive !== false);
      case "invalid_format":
        return format(issue.format);
      case "invalid_value":
        return issue.values.length === 1 ? `must be ${JSON.stringify(issue.values[0])}` : `must be one of ${issue.values.map(String).join(", ")}`;
      case "unrecognized_keys": {
        const taken = issue.inst instanceof z.ZodObject ? `: it takes ${listed(Object.keys(issue.inst.shape), "and")}` : "";
        return `does not take ${issue.keys.join(", ")}${taken}`;
      }
      case "not_multiple_of":
        return `must be a multiple of ${issue.divisor}`;
      case "invalid_union":
        return "is not in any of the accepted forms";
      default:
        return undefined;
    }
  };
}

/** The body (or query) as a whole is missing or not an object: name the fields it takes. */
function wholePart(location: Location, schema: z.ZodObject, input: unknown): string {
  const names = Object.keys(schema.shape);
  const required = names.filter((name) => !schema.shape[name].isOptional());
  const optional = names.filter((name) => schema.shape[name].isOptional());
  let fields: string;
  if (required.length === 0) fields = listed(optional, "or");
  else fields = listed(required, "and") + (optional.length ? `, and optionally ${listed(optional, "or")}` : "");
  const what = `a JSON object with ${fields}`;
  if (input === undefined && location === "body") return `is required: send ${what} (Content-Type: application/json)`;
  return `must be ${what}`;
}

function listed(names: string[], last: "and" | "or"): string {
  return names.length <= 1 ? (names[0] ?? "") : `${names.slice(0, -1).join(", ")} ${last} ${names.at(-1)}`;
}

const EXPECTED: Record<string, string> = {
  string: "a string",
  number: "a number",
  int: "a whole number",
  bigint: "a whole number",
  boolean: "true or false",
  object: "an object",
  array: "a list",
  null: "null",
  date: "a date",
};

function expected(type: string): string {
  return EXPECTED[type] ?? `of type ${type}`;
}

/** What was sent instead, when zod knows (a coerced query value that is no number says NaN: left out). */
function received(issue: { input?: unknown; received?: unknown }): string {
  if (issue.received === "NaN") return "";
  const value = issue.input;
  if (value === null) return ", not null";
  if (Array.isArray(value)) return ", not a list";
  if (typeof value === "string") return ", not a string";
  if (typeof value === "number") return Number.isInteger(value) ? ", not a number" : `, not ${value}`;
  if (typeof value === "boolean") return `, not ${value}`;
  if (typeof value === "object") return ", not an object";
  return "";
}

function tooSmall(origin: string, minimum: number, inclusive: boolean): string {
  if (origin === "string") return minimum <= 1 ? "must not be empty" : `must be at least ${minimum} characters`;
  if (origin === "array" || origin === "set") return `must list at least ${minimum} ${minimum === 1 ? "item" : "items"}`;
  return inclusive ? `must be at least ${minimum}` : `must be more than ${minimum}`;
}

function tooBig(origin: string, maximum: number, inclusive: boolean): string {
  if (origin === "string") return `must be at most ${maximum} characters`;
  if (origin === "array" || origin === "set") return `must list at most ${maximum} ${maximum === 1 ? "item" : "items"}`;
  return inclusive ? `must be at most ${maximum}` : `must be less than ${maximum}`;
}

function format(name: string): string {
  switch (name) {
    case "uuid":
    case "guid":
      return `must be a UUID such as ${EXAMPLE_UUID}`;
    case "email":
      return "must be an email address such as ada@example.com";
    case "ipv4":
      return "must be an IPv4 address such as 192.168.1.20";
    case "ipv6":
      return "must be an IPv6 address such as fd00::20";
    case "url":
      return "must be a URL such as https://example.com/";
    case "regex":
      return "has characters or a shape that is not allowed here";
    default:
      return `must be a valid ${name}`;
  }
}
