/** The signed-in caller, as established by the auth middleware from a verified service token. */
export interface Actor {
  userId: string;
  email: string;
}
