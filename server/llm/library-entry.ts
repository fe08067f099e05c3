import { z } from "zod";

/** One model of the public library, as search answers it (docs/decisions/0006-model-pull-events.md). */
export const libraryEntrySchema = z.object({
  name: z.string().min(1).max(200),
  description: z.string().max(2000).default(""),
  capabilities: z.array(z.string().max(40)).max(20).default([]),
  sizes: z.array(z.string().max(40)).max(50).default([]),
  pulls: z.number().int().nonnegative().default(0),
  updated_at: z.string().max(40).nullable().default(null),
});
export type LibraryEntry = z.infer<typeof libraryEntrySchema>;
