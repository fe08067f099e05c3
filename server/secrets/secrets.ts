import { FileSecretStore } from "./file-store";
import { KeychainSecretStore, probeKeychain } from "./keychain-store";

export { FileSecretStore, SecretStoreError, SECRETS_FILE_NAME, KEY_FILE_NAME } from "./file-store";
export { KeychainSecretStore, keychainAccount, keychainNamespace, probeKeychain } from "./keychain-store";

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

export interface OpenSecretStoreOptions {
  dataDir: string;
  /** The keychain service name; default "Sluice". */
  service?: string;
  logger: { warn(msg: string): void };
  /** Try the OS keychain first; default true. False goes straight to the encrypted file. */
  preferKeychain?: boolean;
}

/**
 * Opens the OS keychain if a probe write/read/delete succeeds there, else the
 * AES-256-GCM file under dataDir, saying so once through logger.warn.
 */
export async function openSecretStore(opts: OpenSecretStoreOptions): Promise<SecretStore> {
  const service = opts.service ?? "Sluice";
  if (opts.preferKeychain ?? true) {
    const probe = await probeKeychain(service, opts.dataDir);
    if (probe.ok) return new KeychainSecretStore(service, opts.dataDir);
    const store = await FileSecretStore.open(opts.dataDir);
    opts.logger.warn(`No OS keychain available (${probe.reason}); secrets are stored encrypted in ${store.filePath}`);
    return store;
  }
  return FileSecretStore.open(opts.dataDir);
}
