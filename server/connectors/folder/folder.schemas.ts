import { z } from "zod";
import { DATA_SOURCE_NAME } from "../../routing/data-sources.schemas";

/** Request schemas of the folder source endpoints; the path's safety rules are in folder-roots.ts. */

export const createFolderSourceBody = z.object({
  data_source: z.object({ data_source_name: DATA_SOURCE_NAME }),
  folder_source: z.object({
    path: z.string().trim().min(1, "is required").max(4096, "must be at most 4096 characters"),
  }),
});
