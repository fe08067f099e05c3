/** Where the product keeps every secret: the JWT signing secret, SMB passwords, OAuth tokens. */
export interface SecretStore {
  /** The stored value, or null when there is none. */
  get(key: string): Promise<string | null>;
  set(key: string, value: string): Promise<void>;
  /** The stored value; when there is none, stores make()'s and returns what is stored then. */
  getOrCreate(key: string, make: () => string): Promise<string>;
  /** Removes the value; a missing key is not an error. */
  delete(key: string): Promise<void>;
  readonly kind: "keychain" | "file" | "database";
}

/** A secret store failure: unreadable/tampered files, an unusable keychain. Never carries a secret value. */
export class SecretStoreError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "SecretStoreError";
  }
}
