import { z } from "zod";

/** Request schemas of the pipeline routes. */
export const createPipelineBody = z.object({
  name: z.string().trim().min(1, "is required").max(200),
  description: z.string().max(2000).default(""),
  data_source_id: z.string().min(1, "is required"),
  collection_id: z.string().min(1, "is required"),
});
