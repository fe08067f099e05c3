import { z } from "zod";

/** Request schemas of sign-up and sign-in, with the contract's limits (docs/decisions/0002-limits.md). */

const PASSWORD = z
  .string()
  .min(8, "must be at least 8 characters")
  .max(100, "must be at most 100 characters")
  .regex(/\p{L}/u, "must contain at least one letter")
  .regex(/\p{Nd}/u, "must contain at least one digit")
  .describe(
    "8 to 100 characters, with at least one letter and one digit. Every character counts, however many bytes the password takes: " +
      "it is reduced with HMAC-SHA256 before bcrypt (cost 12), so nothing beyond bcrypt's 72-byte limit is cut off.",
  );

export const EMAIL = z.email("must be a valid email address").max(254, "must be at most 254 characters");

/** An invitation link's token (the `invitation` parameter of its #/signup link). */
export const INVITATION_TOKEN = z.string().min(1, "is required").max(200, "must be at most 200 characters").describe("The `invitation` parameter of an invitation link");

export const signUpBody = z.object({
  email: EMAIL,
  password: PASSWORD,
  invitation: INVITATION_TOKEN.optional().describe("An invitation link's token: the way in under SIGNUP=invite; the email must be the invited one"),
});

export const signUpQuery = z.object({ invitation: INVITATION_TOKEN.optional() });

// Sign-in checks only presence: a wrong password is a 401, not a lesson in the rules.
export const signInBody = z.object({
  email: z.string().min(1, "is required").max(254),
  password: z.string().min(1, "is required").max(1000),
});

// The current password checks only presence (a wrong one is a 403); the new one meets the sign-up rules.
export const changePasswordBody = z.object({
  current_password: z.string().min(1, "is required").max(1000),
  new_password: PASSWORD,
});

export const signOutQuery = z.object({
  everywhere: z.enum(["true", "false"], { error: 'must be "true" or "false"' }).optional().describe("`true`: end every session of the account, this one included"),
});
