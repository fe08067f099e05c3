import { z } from "zod";
import { ID } from "../../routing/common.schemas";
import { DATA_SOURCE_NAME } from "../../routing/data-sources.schemas";

/** Request schemas of the Google Drive endpoints. */

const DRIVE_FILE_ID = z
  .string()
  .min(1, "is required")
  .max(200, "must be at most 200 characters")
  .regex(/^[A-Za-z0-9_-]+$/, "must be a Drive file id (letters, digits, underscores, hyphens)");

export const connectDriveQuery = z.object({ return_to: z.string().max(2000, "must be at most 2000 characters").optional() });

export const driveCallbackQuery = z.object({
  // A sealed state (oauth-states.ts) is a few hundred characters.
  state: z.string().max(2000).optional(),
  code: z.string().max(2000).optional(),
  error: z.string().max(200).optional(),
});

export const createDriveSourceBody = z.object({
  data_source: z.object({
    data_source_name: DATA_SOURCE_NAME,
    owner_group_id: ID,
  }),
});

export const registerDriveFilesBody = z.object({
  file_ids: z.array(DRIVE_FILE_ID).min(1, "must list at least one file").max(1000, "must list at most 1000 files"),
});
