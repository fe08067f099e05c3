import { z } from "zod";

/** The nil UUID. Every id Sluice makes is a random (v4) UUID, so no row has this one. */
export const NO_SUCH_ID = "00000000-0000-0000-0000-000000000000";

const UUID = z.regexes.uuid();

/**
 * An id in a path, query or body (spec: identifiers are UUIDs), so services and engines get only
 * UUIDs. A UUID in either case goes on in lowercase, the form every id is stored in. Anything
 * else names nothing: it goes on as NO_SUCH_ID, so the route answers exactly as for a missing id
 * (spec Access rules 3: same status, same detail; docs/decisions/0007-http-rules.md). A NUL goes on as sent,
 * for validate.ts to refuse with 422 as on every field.
 */
export const ID = z
  .string()
  .min(1, "is required")
  .transform((value) => (UUID.test(value) ? value.toLowerCase() : value.includes("\0") ? value : NO_SUCH_ID))
  .meta({ format: "uuid" });

/** Path parameters every resource shares. Each resource's own schemas sit in <resource>.schemas.ts. */
export const idParams = z.object({ id: ID });

/** Routes that create something inside a group name it in the path. */
export const groupIdParams = z.object({ group_id: ID });
