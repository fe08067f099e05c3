import { z } from "zod";
import { ID } from "../routing/common.schemas";

/** Request schemas of the model routes. */
const modelName = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._\-/:]*$/, "must be a model name such as llama3.2 or qwen2.5:7b");

export const librarySearchQuery = z.object({
  q: z.string().max(200).default(""),
  top_k: z.coerce.number().int().min(1).max(100).default(10),
});

export const pullModelBody = z.object({
  model_name: modelName,
  /** Pull a model the catalog already has again (a newer version, re-benchmarked); without it the answer says it is there. */
  update: z.boolean().default(false),
});

export const cancelPullBody = z.object({ model_name: modelName });

export const addPersonalModelBody = z.object({
  model_name: modelName,
  hardware_notes: z.string().max(2000).default(""),
});

export const updatePersonalModelBody = z.object({
  model_name: modelName,
  hardware_notes: z.string().max(2000),
});

export const modelIdParams = z.object({ id: ID });
export const personalRecordParams = z.object({ record_id: ID });
