import { z } from "zod";
import { GROUP_PERMISSIONS } from "../data/entities/group.entity";

/** Request schemas, one place for every limit of the spec's Limits table. */

export const PASSWORD = z
  .string()
  .min(8, "must be at least 8 characters")
  .max(100, "must be at most 100 characters")
  .regex(/\p{L}/u, "must contain at least one letter")
  .regex(/\p{Nd}/u, "must contain at least one digit");

export const EMAIL = z.email("must be a valid email address").max(254, "must be at most 254 characters");

export const signUpBody = z.object({ email: EMAIL, password: PASSWORD });

// Sign-in checks only presence: a wrong password is a 401, not a lesson in the rules.
export const signInBody = z.object({
  email: z.string().min(1, "is required").max(254),
  password: z.string().min(1, "is required").max(1000),
});

export const GROUP_NAME = z
  .string()
  .min(3, "must be at least 3 characters")
  .max(50, "must be at most 50 characters")
  .regex(/^[A-Za-z0-9_-]+$/, "may contain only letters, digits, underscores and hyphens");

export const createGroupBody = z.object({
  group_name: GROUP_NAME,
  group_permission: z.enum(GROUP_PERMISSIONS, `must be one of ${GROUP_PERMISSIONS.join(", ")}`),
});

export const setParentBody = z.object({ parent_group_id: z.string().min(1).nullable() });

export const COLLECTION_NAME = z
  .string()
  .min(1, "is required")
  .max(100, "must be at most 100 characters")
  .regex(/^[A-Za-z0-9_]+$/, "may contain only letters, digits and underscores");

export const createCollectionBody = z.object({ name: COLLECTION_NAME, owner_group_id: z.string().min(1, "is required") });

export const idParams = z.object({ id: z.string().min(1) });
export const memberParams = z.object({ id: z.string().min(1), email: z.string().min(1).max(254) });

export const groupIdParams = z.object({ group_id: z.string().min(1) });

export const createPipelineBody = z.object({
  name: z.string().trim().min(1, "is required").max(200),
  description: z.string().max(2000).default(""),
  data_source_id: z.string().min(1, "is required"),
  collection_id: z.string().min(1, "is required"),
});

export const searchQuery = z.object({
  q: z.string().trim().min(1, "is required").max(500, "must be at most 500 characters"),
  top_k: z.coerce.number().int().min(1).max(100).default(10),
});

export const pageQuery = z.object({
  offset: z.coerce.number().int().min(0).default(0),
  limit: z.coerce.number().int().min(1).max(500).default(50),
});
