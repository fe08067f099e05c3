import { z } from "zod";

/** Path parameters every resource shares. Each resource's own schemas sit in <resource>.schemas.ts. */
export const idParams = z.object({ id: z.string().min(1) });

/** Routes that create something inside a group name it in the path. */
export const groupIdParams = z.object({ group_id: z.string().min(1) });
