import { z } from "zod";
import { decodeCursor } from "../audit/audit";

export const auditQuery = z.object({
  limit: z.coerce.number({ error: "must be a whole number from 1 to 200" }).int("must be a whole number from 1 to 200").min(1, "must be a whole number from 1 to 200").max(200, "must be a whole number from 1 to 200").default(50),
  before: z
    .string()
    .max(200)
    .refine((value) => decodeCursor(value) !== null, "must be the `next` of an earlier page")
    .optional()
    .describe("The `next` of the page before: the events older than it"),
});
