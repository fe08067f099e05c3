import { z } from "zod";

/** Request schemas of the collection routes (docs/decisions.md: Limits). */

export const COLLECTION_NAME = z
  .string()
  .min(1, "is required")
  .max(100, "must be at most 100 characters")
  .regex(/^[A-Za-z0-9_]+$/, "may contain only letters, digits and underscores");

export const createCollectionBody = z.object({ name: COLLECTION_NAME, owner_group_id: z.string().min(1, "is required") });

export const searchQuery = z.object({
  q: z.string().trim().min(1, "is required").max(500, "must be at most 500 characters"),
  top_k: z.coerce.number().int().min(1).max(100).default(10),
  /** Default: hybrid when the collection has an embedding model, else keyword. */
  mode: z.enum(["keyword", "semantic", "hybrid"]).optional(),
});

/** A model name as Ollama spells it, or null to turn embeddings off. */
export const embeddingBody = z.object({
  model: z.string().trim().min(1, "is required").max(200, "must be at most 200 characters").nullable(),
});

export const pageQuery = z.object({
  offset: z.coerce.number().int().min(0).default(0),
  limit: z.coerce.number().int().min(1).max(500).default(50),
});
