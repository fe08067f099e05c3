import { z } from "zod";
import { ID } from "../routing/common.schemas";

/** Request schemas of asking a collection (docs/decisions/0002-limits.md). */

export const askBody = z.object({
  question: z.string().trim().min(1, "is required").max(2000, "must be at most 2,000 characters"),
  model: z.string().trim().min(1, "is required").max(200, "must be at most 200 characters"),
  top_k: z.number().int().min(1).max(20).default(5),
  conversation_id: ID.optional(),
});
