import os from "node:os";
import path from "node:path";
import express from "express";
import { z } from "zod";
import { parseOllamaHost } from "./net/ollama-host";
import { parseNetworkEntry } from "./net/network-entry";

/** Everything the server reads from the environment, validated once at start-up (README: Configuration). */
export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /** OLLAMA_HOST as a base URL (Ollama's own forms accepted, see net/ollama-host.ts). */
  ollamaHost: string;
  /** PUBLIC_URL, or null to use the address the server ends up listening on (PORT=0 is only known then). */
  publicUrl: string | null;
  /** Social sign-in: the provider's keys, and the issuer and audience its tokens must name (all three, or none). */
  idp: { jwksUrl: string; issuer: string; audience: string } | null;
  google: { clientId: string; clientSecret: string; authUrl: string; tokenUrl: string; apiUrl: string } | null;
  /** "auto" probes the OS keychain and falls back to the encrypted file; "file" skips the keychain. */
  secretsBackend: "auto" | "file";
  /** Limit for every SMB network call (connect, each request); a silent server fails after this. */
  smbTimeoutMs: number;
  /** SMB_ALLOWED_NETWORKS: the networks (`address/prefix`) SMB sources may point at; null: any address. */
  smbAllowedNetworks: string[] | null;
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
  /** INGEST_CONCURRENCY: ingestion jobs (of different pipelines) running at once across a team server; always 1 on the desktop. */
  ingestConcurrency: number;
  /** JWT_SECRET: the signing secret shared by API processes on several machines; null keeps it in the secret store. */
  jwtSecret: string | null;
  /**
   * SECRETS_KEY (team server): the 32-byte key sealing the secrets kept in the shared database,
   * the same on every machine. Null: a key made once and kept in this machine's secret store.
   */
  secretsKey: Buffer | null;
  /** MODEL_LIBRARY_URL: a JSON catalog ({models:[...]} or an array) to refresh the model library from; null: the shipped one. */
  modelLibraryUrl: string | null;
  /** SLUICE_SSE_KEEPALIVE_MS: a `: keep-alive` comment after this long without an event. */
  sseKeepAliveMs: number;
  /** SLUICE_PULL_RETRY_DELAY_MS: wait before retrying a failed model download (doubles per retry). */
  pullRetryDelayMs: number;
  /** LOG_LEVEL: the least severe level written to the log. */
  logLevel: LogLevel;
  /** FOLDER_SOURCE_ROOTS: the folders (absolute paths) that folder data sources may read under; empty: none. */
  folderSourceRoots: string[];
  /** DB_OUTAGE_GRACE_S, in ms: how long a running ingestion job retries through an unreachable database before failing "Database connection lost". */
  dbOutageGraceMs: number;
  /** SEARCH_READERS: threads that run desktop (SQLite) searches, each with its own read-only connection. */
  searchReaders: number;
  /** SEARCH_QUEUE_LIMIT: searches waiting for a reader thread at most; past it a search answers 503 with Retry-After. */
  searchQueueLimit: number;
  /** SEARCH_CACHE_MB, in bytes: memory for recent desktop search results, each valid while its collection's index is unchanged; 0: no cache. */
  searchCacheBytes: number;
  /** SLUICE_SCHEDULER_TICK_MS: how often each process looks for due pipeline schedules. */
  schedulerTickMs: number;
  /** SLUICE_TEST_CLOCK_FILE (tests only): a file whose ISO 8601 text is the time schedules read; null: the system clock. */
  testClockFile: string | null;
  /**
   * TRUST_PROXY, as Express's `trust proxy` setting: false (the socket's address is the client's),
   * a number of proxy hops, or the addresses / CIDR ranges / names (loopback, linklocal, uniquelocal) of trusted proxies.
   */
  trustProxy: false | number | string[];
  /** SMB_CONNECT_LIMIT_PER_MINUTE: SMB connection attempts (source creations, share listings) per user per minute; null: no limit. */
  smbConnectsPerMinute: number | null;
  /** SIGNUP_LIMIT_PER_HOUR: sign-up attempts allowed per client address per hour; null: no limit. */
  signUpsPerHour: number | null;
  /** MIN_FREE_DISK_MB as bytes: an ingestion job refuses to start, and stops, with less free space than this in DATA_DIR. */
  minFreeDiskBytes: number;
}

/**
 * What the configuration chose, as the composition root computed it (composition/compose.ts:
 * modeOf): the rest of the code is handed this, or what was built for it, and never looks at
 * DATABASE_URL or REDIS_URL itself.
 */
export interface Mode {
  /** "sqlite": the desktop's files under DATA_DIR; "postgres": a team server's database (DATABASE_URL). */
  database: "sqlite" | "postgres";
  /** "in-process": the serial queue of one server; "redis": BullMQ, shared by every process of a team server (REDIS_URL). */
  queue: "in-process" | "redis";
}

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Every bad variable at once, one sentence each, so a first start is not a game of one fix per try. */
export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string | string[]) {
    const list = typeof problems === "string" ? [problems] : problems;
    super(list.join("; "));
    this.problems = list;
  }
}

/**
 * Variables whose value an error does not repeat: those that may carry a password or a key, and
 * lists, whose message names the bad entry itself.
 */
const NOT_ECHOED = new Set(["DATABASE_URL", "REDIS_URL", "JWT_SECRET", "SECRETS_KEY", "GOOGLE_CLIENT_SECRET", "FOLDER_SOURCE_ROOTS", "SMB_ALLOWED_NETWORKS"]);

/** Unset and blank mean the same (the default); values are read trimmed. */
function setting<T extends z.ZodType>(schema: T) {
  return z.preprocess((raw) => (typeof raw === "string" && raw.trim() !== "" ? raw.trim() : undefined), schema);
}

function integer(min: number, max: number, message: string) {
  return z.coerce.number({ error: message }).int({ error: message }).min(min, { error: message }).max(max, { error: message });
}

/** A URL, answered as parsed and without a trailing slash, as the services join paths to it. */
function url(message = "must be a URL") {
  return z.url({ error: message }).transform((value) => new URL(value).toString().replace(/\/$/, ""));
}

/** The protocol of a URL, or "" when it does not parse. */
function protocolOf(value: string): string {
  return URL.canParse(value) ? new URL(value).protocol : "";
}

const DATABASE_URL_MESSAGE = "must be a postgres:// or postgresql:// URL";
const SECRETS_KEY_MESSAGE = "must be 32 random bytes written as 64 hex digits or in base64 (e.g. the output of: openssl rand -base64 32)";

const TRUST_PROXY_MESSAGE = 'must be a number of proxy hops (e.g. 1) or a comma-separated list of proxy addresses, CIDR ranges, "loopback", "linklocal" or "uniquelocal"';

/** TRUST_PROXY -> Express's `trust proxy` value, checked by Express itself so it cannot fail later at start-up. */
function trustProxy(value: string | undefined, ctx: z.RefinementCtx): false | number | string[] {
  if (value === undefined) return false;
  if (/^\d+$/.test(value)) return Number(value) === 0 ? false : Number(value);
  const entries = value.split(",").map((entry) => entry.trim());
  try {
    // Express compiles the list with proxy-addr, which names the entry it cannot read.
    express().set("trust proxy", entries);
    return entries;
  } catch (error) {
    ctx.addIssue({ code: "custom", message: `${TRUST_PROXY_MESSAGE} (${(error as Error).message})` });
    return z.NEVER;
  }
}

/** The one schema of every setting: variable name -> validated value (defaults as the README's Configuration section lists them). */
const environmentSchema = z.object({
  PORT: setting(integer(0, 65535, "must be an integer from 0 to 65535").default(8420)),
  HOST: setting(z.string().default("127.0.0.1")),
  DATA_DIR: setting(z.string().optional()),
  OLLAMA_HOST: setting(
    z
      .string()
      .default("http://127.0.0.1:11434")
      .transform((value, ctx) => {
        try {
          return parseOllamaHost(value);
        } catch (error) {
          ctx.addIssue({ code: "custom", message: (error as Error).message });
          return z.NEVER;
        }
      }),
  ),
  PUBLIC_URL: setting(url().optional()),
  IDP_JWKS_URL: setting(url().optional()),
  IDP_ISSUER: setting(z.string().optional()),
  IDP_AUDIENCE: setting(z.string().optional()),
  GOOGLE_CLIENT_ID: setting(z.string().optional()),
  GOOGLE_CLIENT_SECRET: setting(z.string().optional()),
  GOOGLE_AUTH_URL: setting(url().default("https://accounts.google.com/o/oauth2/v2/auth")),
  GOOGLE_TOKEN_URL: setting(url().default("https://oauth2.googleapis.com/token")),
  GOOGLE_API_URL: setting(url().default("https://www.googleapis.com")),
  SLUICE_SECRETS: setting(z.enum(["auto", "file"], { error: 'must be "auto" or "file"' }).default("auto")),
  SMB_TIMEOUT_MS: setting(integer(1, Number.MAX_SAFE_INTEGER, "must be a positive integer").default(15_000)),
  SMB_ALLOWED_NETWORKS: setting(
    z
      .string()
      .transform((value, ctx) => {
        const entries: string[] = [];
        for (const entry of value.split(/[\s,]+/).filter(Boolean)) {
          try {
            entries.push(parseNetworkEntry(entry));
          } catch (error) {
            ctx.addIssue({ code: "custom", message: `entries must be IP addresses or networks such as 192.168.10.0/24, separated by commas: ${(error as Error).message}` });
          }
        }
        if (entries.length === 0) ctx.addIssue({ code: "custom", message: "must list at least one IP address or network (unset allows any)" });
        return entries;
      })
      .optional(),
  ),
  DATABASE_URL: setting(
    z
      .string()
      .refine((value) => ["postgres:", "postgresql:"].includes(protocolOf(value)), { error: DATABASE_URL_MESSAGE, abort: true })
      .refine((value) => new URL(value).hostname !== "" || new URL(value).searchParams.has("host"), { error: "must name a host" })
      .optional(),
  ),
  REDIS_URL: setting(
    z
      .string()
      .refine((value) => ["redis:", "rediss:"].includes(protocolOf(value)), { error: "must be a redis:// or rediss:// URL", abort: true })
      .refine((value) => /^\/?\d*$/.test(new URL(value).pathname), { error: "must have a database number as its path, if any (e.g. redis://host:6379/2)" })
      .optional(),
  ),
  REDIS_SENTINELS: setting(
    z
      .string()
      .transform((raw, ctx) =>
        raw.split(",").flatMap((entry) => {
          const match = /^\s*(\[[0-9a-fA-F:.]+\]|[^\s:]+):(\d{1,5})\s*$/.exec(entry);
          const port = Number(match?.[2]);
          if (match && port >= 1 && port <= 65535) return [{ host: match[1].replace(/^\[|\]$/g, ""), port }];
          ctx.addIssue({ code: "custom", message: "must be host:port pairs separated by commas" });
          return [];
        }),
      )
      .optional(),
  ),
  REDIS_PREFIX: setting(z.string().regex(/^[A-Za-z0-9_.-]{1,100}$/, { error: 'must be 1 to 100 letters, digits, "_", "." or "-"' }).default("sluice")),
  SLUICE_WORKER: setting(z.enum(["0", "1"], { error: 'must be "0" or "1"' }).default("1")),
  INGEST_CONCURRENCY: setting(integer(1, 64, "must be an integer from 1 to 64").default(1)),
  JWT_SECRET: setting(z.string().min(32, { error: "must be at least 32 characters" }).optional()),
  SECRETS_KEY: setting(
    z
      .union([z.string().regex(/^[0-9a-fA-F]{64}$/).transform((hex) => Buffer.from(hex, "hex")), z.string().regex(/^[A-Za-z0-9+/]{43}=?$/).transform((b64) => Buffer.from(b64, "base64"))], {
        error: SECRETS_KEY_MESSAGE,
      })
      .optional(),
  ),
  MODEL_LIBRARY_URL: setting(z.url({ error: "must be a URL" }).transform((value) => new URL(value).toString()).optional()),
  SLUICE_SSE_KEEPALIVE_MS: setting(integer(1, Number.MAX_SAFE_INTEGER, "must be a positive integer").default(10_000)),
  SLUICE_PULL_RETRY_DELAY_MS: setting(integer(1, Number.MAX_SAFE_INTEGER, "must be a positive integer").default(1_000)),
  LOG_LEVEL: setting(
    z
      .string()
      .default("info")
      .transform((value) => value.toLowerCase())
      .pipe(z.enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(", ")}` })),
  ),
  DB_OUTAGE_GRACE_S: setting(integer(0, 86_400, "must be a whole number of seconds from 0 to 86400").default(60)),
  SEARCH_READERS: setting(integer(1, 64, "must be an integer from 1 to 64").optional()),
  SEARCH_QUEUE_LIMIT: setting(integer(0, 100_000, "must be an integer from 0 to 100000").default(256)),
  SEARCH_CACHE_MB: setting(integer(0, 4096, "must be a whole number of megabytes from 0 to 4096").default(32)),
  SLUICE_SCHEDULER_TICK_MS: setting(integer(10, 3_600_000, "must be an integer from 10 to 3600000").default(15_000)),
  SLUICE_TEST_CLOCK_FILE: setting(z.string().optional()),
  MIN_FREE_DISK_MB: setting(integer(0, 1_000_000_000, "must be a whole number of megabytes (0 or more)").default(100)),
  FOLDER_SOURCE_ROOTS: z
    .string()
    .optional()
    .transform((value, ctx) => {
      const entries = (value ?? "").split(path.delimiter).map((entry) => entry.trim()).filter(Boolean);
      for (const entry of entries) {
        if (!path.isAbsolute(entry)) ctx.addIssue({ code: "custom", message: `entries must be absolute paths; "${entry}" is not` });
      }
      return entries.map((entry) => path.resolve(entry));
    }),
  TRUST_PROXY: setting(z.string().optional().transform(trustProxy)),
  SMB_CONNECT_LIMIT_PER_MINUTE: setting(integer(0, 1_000_000, "must be an integer from 0 (no limit) to 1000000").default(10)),
  SIGNUP_LIMIT_PER_HOUR: setting(integer(0, 1_000_000, "must be an integer from 0 (no limit) to 1000000").default(20)),
})
  .superRefine(
    (e, ctx) => {
      // Without both, any token the provider signed for any application would sign in here.
      if (!e.IDP_JWKS_URL) return;
      for (const name of ["IDP_ISSUER", "IDP_AUDIENCE"] as const) {
        if (!e[name]) ctx.addIssue({ code: "custom", path: [name], message: `must be set when IDP_JWKS_URL is (social sign-in checks that the provider's tokens name ${name === "IDP_ISSUER" ? "it as their issuer" : "this instance as their audience"})` });
      }
    },
    // Also when other settings are wrong, so one error lists every problem.
    { when: () => true },
  )
  .superRefine((e, ctx) => {
    // The in-process queue runs one job at a time (the spec's rule); a team server may choose more.
    if (e.INGEST_CONCURRENCY > 1 && !e.REDIS_URL) {
      ctx.addIssue({ code: "custom", path: ["INGEST_CONCURRENCY"], message: "above 1 needs REDIS_URL (a team server): the desktop runs one ingestion job at a time" });
    }
  })
  .superRefine((e, ctx) => {
  // With Sentinels, REDIS_URL's host is the master group name (as redis-rb and Sidekiq read it), so it takes no port.
  if (!e.REDIS_SENTINELS) return;
  if (!e.REDIS_URL) ctx.addIssue({ code: "custom", path: ["REDIS_SENTINELS"], message: "needs REDIS_URL, whose host is the Sentinel master group name (e.g. redis://mymaster)" });
  else if (new URL(e.REDIS_URL).port) ctx.addIssue({ code: "custom", path: ["REDIS_SENTINELS"], message: "makes REDIS_URL's host the Sentinel master group name, which takes no port (e.g. redis://mymaster)" });
});

/** One search thread per core, at most 4: searches are CPU-bound, and the main thread and the index writer need a share too. */
function defaultSearchReaders(): number {
  return Math.max(1, Math.min(os.availableParallelism(), 4));
}

/** The OS per-user app-data folder, as Electron's app.getPath("appData") would give it. */
function defaultDataDir(env: NodeJS.ProcessEnv): string {
  const home = os.homedir();
  if (process.platform === "win32") return path.join(env.APPDATA ?? path.join(home, "AppData", "Roaming"), "Sluice");
  if (process.platform === "darwin") return path.join(home, "Library", "Application Support", "Sluice");
  return path.join(env.XDG_CONFIG_HOME ?? path.join(home, ".config"), "Sluice");
}

/** One sentence per problem: `NAME must ...`, with the value unless it may be secret (or is already named). */
function describe(issue: z.ZodError["issues"][number], env: NodeJS.ProcessEnv): string {
  const name = String(issue.path[0]);
  const raw = env[name]?.trim();
  const echo = raw !== undefined && !NOT_ECHOED.has(name);
  return `${name} ${issue.message}${echo ? `, got "${raw}"` : ""}`;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = environmentSchema.safeParse(env);
  if (!parsed.success) throw new ConfigError(parsed.error.issues.map((issue) => describe(issue, env)));
  const e = parsed.data;
  return {
    port: e.PORT,
    host: e.HOST,
    dataDir: path.resolve(e.DATA_DIR ?? defaultDataDir(env)),
    ollamaHost: e.OLLAMA_HOST,
    publicUrl: e.PUBLIC_URL ?? null,
    idp: e.IDP_JWKS_URL && e.IDP_ISSUER && e.IDP_AUDIENCE ? { jwksUrl: e.IDP_JWKS_URL, issuer: e.IDP_ISSUER, audience: e.IDP_AUDIENCE } : null,
    google:
      e.GOOGLE_CLIENT_ID && e.GOOGLE_CLIENT_SECRET
        ? { clientId: e.GOOGLE_CLIENT_ID, clientSecret: e.GOOGLE_CLIENT_SECRET, authUrl: e.GOOGLE_AUTH_URL, tokenUrl: e.GOOGLE_TOKEN_URL, apiUrl: e.GOOGLE_API_URL }
        : null,
    secretsBackend: e.SLUICE_SECRETS,
    smbTimeoutMs: e.SMB_TIMEOUT_MS,
    smbAllowedNetworks: e.SMB_ALLOWED_NETWORKS ?? null,
    databaseUrl: e.DATABASE_URL ?? null,
    redisUrl: e.REDIS_URL ?? null,
    redisSentinels: e.REDIS_SENTINELS ?? null,
    redisPrefix: e.REDIS_PREFIX,
    runWorker: e.SLUICE_WORKER === "1",
    ingestConcurrency: e.INGEST_CONCURRENCY,
    jwtSecret: e.JWT_SECRET ?? null,
    secretsKey: e.SECRETS_KEY ?? null,
    modelLibraryUrl: e.MODEL_LIBRARY_URL ?? null,
    sseKeepAliveMs: e.SLUICE_SSE_KEEPALIVE_MS,
    pullRetryDelayMs: e.SLUICE_PULL_RETRY_DELAY_MS,
    logLevel: e.LOG_LEVEL,
    folderSourceRoots: e.FOLDER_SOURCE_ROOTS,
    dbOutageGraceMs: e.DB_OUTAGE_GRACE_S * 1000,
    searchReaders: e.SEARCH_READERS ?? defaultSearchReaders(),
    searchQueueLimit: e.SEARCH_QUEUE_LIMIT,
    searchCacheBytes: e.SEARCH_CACHE_MB * 1024 * 1024,
    schedulerTickMs: e.SLUICE_SCHEDULER_TICK_MS,
    testClockFile: e.SLUICE_TEST_CLOCK_FILE ? path.resolve(e.SLUICE_TEST_CLOCK_FILE) : null,
    trustProxy: e.TRUST_PROXY,
    signUpsPerHour: e.SIGNUP_LIMIT_PER_HOUR === 0 ? null : e.SIGNUP_LIMIT_PER_HOUR,
    smbConnectsPerMinute: e.SMB_CONNECT_LIMIT_PER_MINUTE === 0 ? null : e.SMB_CONNECT_LIMIT_PER_MINUTE,
    minFreeDiskBytes: e.MIN_FREE_DISK_MB * 1_000_000,
  };
}
