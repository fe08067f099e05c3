import { FileSecretStore } from "./file-store";
import { KeychainSecretStore, probeKeychain } from "./keychain-store";
import type { SecretStore } from "./secret-store";

// The stores import only secret-store.ts (the interface and its error), never this file: no import circle.
export { SecretStoreError, type SecretStore } from "./secret-store";
export { FileSecretStore, SECRETS_FILE_NAME, KEY_FILE_NAME } from "./file-store";
export { KeychainSecretStore, keychainAccount, keychainNamespace, probeKeychain } from "./keychain-store";

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
