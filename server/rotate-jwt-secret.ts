import { rotateSigningSecret } from "./accounts/tokens";
import { openStorage } from "./composition/compose";
import { ConfigError, loadConfig } from "./config";

/**
 * `npm run rotate-jwt-secret`: a new session signing secret in the store the server reads
 * (the keychain or the encrypted file under DATA_DIR; a team server's database). Every session
 * ends once the servers restart; API keys are not signed with it and keep working.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  if (config.jwtSecret) {
    throw new Error("JWT_SECRET is set, so the servers sign with it and not with the stored secret: put a new value of at least 32 characters in JWT_SECRET on every server and restart them");
  }
  const storage = await openStorage(config, { warn: (message) => process.stderr.write(`${message}\n`) });
  try {
    await rotateSigningSecret(storage.secrets);
  } finally {
    await storage.index.close();
    await storage.vectors.close();
    await storage.db.destroy();
  }
  process.stdout.write(
    "rotated the session signing secret: restart every Sluice server process (each keeps the old secret until it restarts); then every session token is refused and everyone signs in again. API keys keep working.\n",
  );
}

main().catch((error: unknown) => {
  const message = error instanceof ConfigError ? `configuration error: ${error.message}` : (error as Error).message;
  process.stderr.write(`${message}\n`);
  process.exit(1);
});
