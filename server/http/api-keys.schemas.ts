import { z } from "zod";

export const createApiKeyBody = z.object({
  name: z.string().trim().min(1, "is required").max(100, "must be at most 100 characters").describe("What the key is for, to recognise it in the list"),
});
