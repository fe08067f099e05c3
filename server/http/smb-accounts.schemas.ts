import { z } from "zod";
import { ID } from "../routing/common.schemas";

/** Request schemas of /users/me/smb_accounts. */

export const linkSmbAccountBody = z.object({
  data_source_id: ID,
  username: z.string().trim().min(1, "is required").max(256, "must be at most 256 characters"),
  password: z.string().min(1, "is required").max(256, "must be at most 256 characters"),
});
