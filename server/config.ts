import os from "node:os";
import path from "node:path";

/** Everything the server reads from the environment, validated once at start-up (see RUNTIME-CONTRACT.md). */
export interface Config {
  port: number;
  host: string;
  dataDir: string;
  ollamaHost: string;
  /** PUBLIC_URL, or null to use the address the server ends up listening on (PORT=0 is only known then). */
  publicUrl: string | null;
  idp: { jwksUrl: string; issuer?: string; audience?: string } | null;
  google: { clientId: string; clientSecret: string; authUrl: string; tokenUrl: string; apiUrl: string } | null;
  /** "auto" probes the OS keychain and falls back to the encrypted file; "file" skips the keychain. */
  secretsBackend: "auto" | "file";
  /** Limit for every SMB network call (connect, each request); a silent server fails after this. */
  smbTimeoutMs: number;
  /** DATABASE_URL (postgres:// or postgresql://): team server storage and search on PostgreSQL; null keeps SQLite under dataDir. */
  databaseUrl: string | null;
  /** REDIS_URL (team server mode): the ingestion queue on BullMQ, shared sign-in counts. Null: in-process queue on the database. */
  redisUrl: string | null;
  /** REDIS_SENTINELS: the Sentinels (host:port, comma-separated) that name the master; REDIS_URL's host is then the master group name. */
  redisSentinels: Array<{ host: string; port: number }> | null;
  /** Key prefix in Redis (REDIS_PREFIX), so several Sluice instances can share one Redis. */
  redisPrefix: string;
  /** SLUICE_WORKER=0 makes an API process in team mode take no ingestion jobs itself. */
  runWorker: boolean;
  /** JWT_SECRET: the signing secret shared by API processes on several machines; null keeps it in the secret store. */
  jwtSecret: string | null;
  /**
   * SECRETS_KEY (team server): the 32-byte key sealing the secrets kept in the shared database,
   * the same on every machine. Null: a key made once and kept in this machine's secret store.
   */
  secretsKey: Buffer | null;
}

export class ConfigError extends Error {}

/** The OS per-user app-data folder, as Electron's app.getPath("appData") would give it. */
function defaultDataDir(env: NodeJS.ProcessEnv): string {
  const home = os.homedir();
  if (process.platform === "win32") return path.join(env.APPDATA ?? path.join(home, "AppData", "Roaming"), "Sluice");
  if (process.platform === "darwin") return path.join(home, "Library", "Application Support", "Sluice");
  return path.join(env.XDG_CONFIG_HOME ?? path.join(home, ".config"), "Sluice");
}

function parsePort(raw: string | undefined): number {
  if (raw === undefined || raw === "") return 8420;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError(`PORT must be an integer from 0 to 65535, got "${raw}"`);
  return port;
}

function parsePositiveInt(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw.trim() === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new ConfigError(`${name} must be a positive integer, got "${raw}"`);
  return value;
}

function parseUrl(name: string, raw: string): string {
  try {
    return new URL(raw).toString().replace(/\/$/, "");
  } catch {
    throw new ConfigError(`${name} must be a URL, got "${raw}"`);
  }
}

function parseDatabaseUrl(raw: string | undefined): string | null {
  if (raw === undefined) return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError("DATABASE_URL must be a postgres:// or postgresql:// URL");
  }
  // The message never repeats the URL: it may carry a password.
  if (url.protocol !== "postgres:" && url.protocol !== "postgresql:") throw new ConfigError("DATABASE_URL must be a postgres:// or postgresql:// URL");
  if (!url.hostname && !url.searchParams.get("host")) throw new ConfigError("DATABASE_URL must name a host");
  return raw;
}

function optional(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name]?.trim();
  return value ? value : undefined;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = parsePort(env.PORT);
  const host = optional(env, "HOST") ?? "127.0.0.1";
  const dataDir = path.resolve(optional(env, "DATA_DIR") ?? defaultDataDir(env));
  const jwksUrl = optional(env, "IDP_JWKS_URL");
  const clientId = optional(env, "GOOGLE_CLIENT_ID");
  const clientSecret = optional(env, "GOOGLE_CLIENT_SECRET");
  const secretsBackend = optional(env, "SLUICE_SECRETS") ?? "auto";
  if (secretsBackend !== "auto" && secretsBackend !== "file") throw new ConfigError(`SLUICE_SECRETS must be "auto" or "file", got "${secretsBackend}"`);
  return {
    port,
    host,
    dataDir,
    ollamaHost: parseUrl("OLLAMA_HOST", optional(env, "OLLAMA_HOST") ?? "http://127.0.0.1:11434"),
    publicUrl: optional(env, "PUBLIC_URL") ? parseUrl("PUBLIC_URL", env.PUBLIC_URL!) : null,
    idp: jwksUrl
      ? { jwksUrl: parseUrl("IDP_JWKS_URL", jwksUrl), issuer: optional(env, "IDP_ISSUER"), audience: optional(env, "IDP_AUDIENCE") }
      : null,
    google:
      clientId && clientSecret
        ? {
            clientId,
            clientSecret,
            authUrl: parseUrl("GOOGLE_AUTH_URL", optional(env, "GOOGLE_AUTH_URL") ?? "https://accounts.google.com/o/oauth2/v2/auth"),
            tokenUrl: parseUrl("GOOGLE_TOKEN_URL", optional(env, "GOOGLE_TOKEN_URL") ?? "https://oauth2.googleapis.com/token"),
            apiUrl: parseUrl("GOOGLE_API_URL", optional(env, "GOOGLE_API_URL") ?? "https://www.googleapis.com"),
          }
        : null,
    secretsBackend,
    smbTimeoutMs: parsePositiveInt("SMB_TIMEOUT_MS", env.SMB_TIMEOUT_MS, 15_000),
    databaseUrl: parseDatabaseUrl(optional(env, "DATABASE_URL")),
    ...teamConfig(env),
  };
}

/** 32 bytes as 64 hex digits or base64 (`openssl rand -base64 32`). The message never repeats the value. */
function parseSecretsKey(raw: string | undefined): Buffer | null {
  if (raw === undefined) return null;
  if (/^[0-9a-fA-F]{64}$/.test(raw)) return Buffer.from(raw, "hex");
  if (/^[A-Za-z0-9+/]{43}=?$/.test(raw)) return Buffer.from(raw, "base64");
  throw new ConfigError("SECRETS_KEY must be 32 random bytes written as 64 hex digits or in base64 (e.g. the output of: openssl rand -base64 32)");
}

/** "host:port,host:port" -> addresses; with Sentinels, REDIS_URL's host is the master group name, so it carries no port. */
function parseSentinels(raw: string | undefined, redisUrl: string | null): Config["redisSentinels"] {
  if (raw === undefined) return null;
  if (redisUrl === null) throw new ConfigError("REDIS_SENTINELS needs REDIS_URL, whose host is the Sentinel master group name (e.g. redis://mymaster)");
  if (new URL(redisUrl).port) throw new ConfigError("with REDIS_SENTINELS, REDIS_URL's host is the Sentinel master group name and takes no port (e.g. redis://mymaster)");
  return raw.split(",").map((entry) => {
    const match = /^\s*(\[[0-9a-fA-F:.]+\]|[^\s:]+):(\d{1,5})\s*$/.exec(entry);
    const port = Number(match?.[2]);
    if (!match || port < 1 || port > 65535) throw new ConfigError(`REDIS_SENTINELS must be host:port pairs separated by commas, got "${raw}"`);
    return { host: match[1].replace(/^\[|\]$/g, ""), port };
  });
}

function teamConfig(env: NodeJS.ProcessEnv): Pick<Config, "redisUrl" | "redisSentinels" | "redisPrefix" | "runWorker" | "jwtSecret" | "secretsKey"> {
  const redisUrl = optional(env, "REDIS_URL") ?? null;
  if (redisUrl !== null) {
    let protocol = "";
    try {
      protocol = new URL(redisUrl).protocol;
    } catch {
      // reported below
    }
    if (protocol !== "redis:" && protocol !== "rediss:") throw new ConfigError(`REDIS_URL must be a redis:// or rediss:// URL, got "${redisUrl}"`);
    if (!/^\/?\d*$/.test(new URL(redisUrl).pathname)) throw new ConfigError("REDIS_URL's path must be a database number (e.g. redis://host:6379/2)");
  }
  const redisSentinels = parseSentinels(optional(env, "REDIS_SENTINELS"), redisUrl);
  const redisPrefix = optional(env, "REDIS_PREFIX") ?? "sluice";
  if (!/^[A-Za-z0-9_.-]{1,100}$/.test(redisPrefix)) throw new ConfigError(`REDIS_PREFIX must be 1 to 100 letters, digits, "_", "." or "-", got "${redisPrefix}"`);
  const worker = optional(env, "SLUICE_WORKER") ?? "1";
  if (worker !== "0" && worker !== "1") throw new ConfigError(`SLUICE_WORKER must be "0" or "1", got "${worker}"`);
  const jwtSecret = optional(env, "JWT_SECRET") ?? null;
  if (jwtSecret !== null && jwtSecret.length < 32) throw new ConfigError("JWT_SECRET must be at least 32 characters");
  return { redisUrl, redisSentinels, redisPrefix, runWorker: worker === "1", jwtSecret, secretsKey: parseSecretsKey(optional(env, "SECRETS_KEY")) };
}
