import { z } from "zod";
import { EMAIL } from "./accounts.schemas";

/** Request schemas of the invitation routes. */
export const createInvitationBody = z.object({ email: EMAIL });
