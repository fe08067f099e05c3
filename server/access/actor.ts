/** The signed-in caller, as established by the auth middleware from a verified service token or an API key. */
export interface Actor {
  userId: string;
  email: string;
  /** Set when the caller came with an API key (its id) rather than a session token. */
  apiKeyId?: string;
}
