import { z } from "zod";
import { ID } from "../routing/common.schemas";
import { GROUP_PERMISSIONS } from "../data/entities/group.entity";

/** Request schemas of the group routes (docs/decisions/0002-limits.md). */

const GROUP_NAME = z
  .string()
  .min(3, "must be at least 3 characters")
  .max(50, "must be at most 50 characters")
  .regex(/^[A-Za-z0-9_-]+$/, "may contain only letters, digits, underscores and hyphens");

export const createGroupBody = z.object({
  group_name: GROUP_NAME,
  group_permission: z.enum(GROUP_PERMISSIONS, `must be one of ${GROUP_PERMISSIONS.join(", ")}`),
});

export const setParentBody = z.object({ parent_group_id: ID.nullable() });

export const memberParams = z.object({ id: ID, email: z.string().min(1).max(254) });
