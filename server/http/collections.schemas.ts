import { z } from "zod";
import { ID } from "../routing/common.schemas";

/** Request schemas of the collection routes (docs/decisions/0002-limits.md). */

const COLLECTION_NAME = z
  .string()
  .min(1, "is required")
  .max(100, "must be at most 100 characters")
  .regex(/^[A-Za-z0-9_]+$/, "may contain only letters, digits and underscores");

export const createCollectionBody = z.object({ name: COLLECTION_NAME, owner_group_id: ID });

const FILE_TYPE = /^[a-z0-9]{1,10}$/;

export const searchQuery = z.object({
  q: z.string().trim().min(1, "is required").max(500, "must be at most 500 characters"),
  top_k: z.coerce.number().int().min(1).max(100).default(10),
  group_by: z.enum(["document"]).optional().describe("`document`: top_k documents, each with its best passages (`documents`)"),
  type: z
    .string()
    .max(200, "must be at most 200 characters")
    .transform((value) => [...new Set(value.split(",").map((t) => t.trim().replace(/^\./, "").toLowerCase()).filter((t) => t !== ""))])
    .refine((types) => types.every((t) => FILE_TYPE.test(t)), "must be file extensions (letters and digits) separated by commas, e.g. pdf,docx")
    .optional()
    .describe("Only documents with one of these extensions, comma-separated, e.g. `pdf,docx`"),
  folder: z
    .string()
    .max(1000, "must be at most 1000 characters")
    // Either slash, with or without leading and trailing ones, as the user may paste it.
    .transform((value) => value.replaceAll("\\", "/").split("/").filter((p) => p !== "").join("/"))
    .optional()
    .describe("Only documents under this folder of their source paths, e.g. `share/reports`"),
  mode: z
    .enum(["keyword", "semantic", "hybrid"])
    .optional()
    .describe("`keyword` (BM25), `semantic` (by meaning, needs an embedding model) or `hybrid` (both, fused); default: hybrid when the collection has an embedding model, else keyword"),
});

/** A model name as Ollama spells it, or null to turn embeddings off. */
export const embeddingBody = z.object({
  model: z.string().trim().min(1, "is required").max(200, "must be at most 200 characters").nullable(),
});

export const pageQuery = z.object({
  offset: z.coerce.number().int().min(0).default(0),
  limit: z.coerce.number().int().min(1).max(500).default(50),
});
