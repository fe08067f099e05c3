import { z } from "zod";

/** The name every kind of source is created with (spec Limits: 1 to 100 characters). */
export const DATA_SOURCE_NAME = z.string().trim().min(1, "is required").max(100, "must be at most 100 characters");
