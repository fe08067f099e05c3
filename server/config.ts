import os from "node:os";
import path from "node:path";
import { z } from "zod";
import { isLoopbackAddress } from "./net/local-addresses";
import { SETTINGS, settingsTable, type LogLevel, type Settings, type SignupMode } from "./settings";

/** How the parser threads read text from pictures (OCR, OCR_LANGUAGES, OCR_ENGINE). */
export interface OcrSettings {
  enabled: boolean;
  /** Tesseract language codes, in order ("eng", "deu"): each page is read with all of them. */
  languages: string[];
  /** "auto": the `tesseract` command where it is installed with every language, else tesseract.js. */
  engine: "auto" | "tesseract" | "tesseract.js";
}

/** The PEM files HTTPS is served with (TLS_CERT, TLS_KEY), as absolute paths. */
export interface TlsFiles {
  certFile: string;
  keyFile: string;
}

/** Everything the server reads from the environment, validated once at start-up (docs/configuration.md, generated from SETTINGS below). */
export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /** OLLAMA_HOST as a base URL (Ollama's own forms accepted, see net/ollama-host.ts). */
  ollamaHost: string;
  /** PUBLIC_URL, or null to use the address the server ends up listening on (PORT=0 is only known then). */
  publicUrl: string | null;
  /** TLS_CERT and TLS_KEY, resolved: serve HTTPS with this certificate and key (read and checked at start-up, tls/tls-credentials.ts); null: plain HTTP. */
  tls: TlsFiles | null;
  /** Social sign-in: the provider's keys, and the issuer and audience its tokens must name (all three, or none). */
  idp: { jwksUrl: string; issuer: string; audience: string } | null;
  google: { clientId: string; clientSecret: string; authUrl: string; tokenUrl: string; apiUrl: string } | null;
  /** "auto" probes the OS keychain and falls back to the encrypted file; "file" skips the keychain. */
  secretsBackend: "auto" | "file";
  /** Limit for every SMB network call (connect, each request); a silent server fails after this. */
  smbTimeoutMs: number;
  /** SMB_ALLOWED_NETWORKS: the networks (`address/prefix`) SMB sources may point at; null: any address. */
  smbAllowedNetworks: string[] | null;
  /** SMB_CHECK_DEADLINE_S, in ms: the most a source check or share listing may take, whatever the server does. */
  smbCheckDeadlineMs: number;
  /** SMB_ALLOWED_PORTS: the ports SMB sources may dial; null: any on the desktop, 445 and 139 on a LAN server. */
  smbAllowedPorts: number[] | null;
  /** OLLAMA_REGISTRIES: the registry hosts (`host` or `host:port`, lower case) a model name may name (`host/ns/model`). */
  ollamaRegistries: string[];
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
  /** BACKUP_PASSPHRASE: what `npm run backup` seals a backup with (and `restore` opens it with); null: a plain backup without the secrets' key. */
  backupPassphrase: string | null;
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
  /** FOLDER_SOURCE_DOTFILES: "skip" leaves dot-entries (.git, .ssh, ...) of folder sources unread; "index" reads them. */
  folderSourceDotfiles: "skip" | "index";
  /** DB_OUTAGE_GRACE_S, in ms: how long a running ingestion job retries through an unreachable database before failing "Database connection lost". */
  dbOutageGraceMs: number;
  /** SEARCH_READERS: threads that run desktop (SQLite) searches, each with its own read-only connection. */
  searchReaders: number;
  /** SEARCH_QUEUE_LIMIT: searches waiting for a reader thread at most; past it a search answers 503 with Retry-After. */
  searchQueueLimit: number;
  /** OCR, OCR_LANGUAGES, OCR_ENGINE: how pictures and scanned PDF pages are read. */
  ocr: OcrSettings;
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
  /** SMB_CONNECT_LIMIT_PER_MINUTE: SMB connection attempts (source creations, share listings, account links) per user per minute; null: no limit. */
  smbConnectsPerMinute: number | null;
  /** SIGNUP_LIMIT_PER_HOUR: sign-up attempts allowed per client address per hour; null: no limit. */
  signUpsPerHour: number | null;
  /** MIN_FREE_DISK_MB as bytes: an ingestion job refuses to start, and stops, with less free space than this in DATA_DIR. */
  minFreeDiskBytes: number;
  /** ADMIN_EMAILS, lower-cased: the instance's administrators; empty: the first account is. */
  adminEmails: string[];
  /** SIGNUP: who may create an account (default: open on a loopback HOST, invite otherwise). */
  signup: SignupMode;
  /** SIGNUP_DOMAINS, lower-cased: the only email domains open sign-up accepts; empty: any. */
  signupDomains: string[];
  /** AUDIT_DAYS: how long audit events are kept. */
  auditDays: number;
  /** PASSWORD_HASH_THREADS: worker threads that hash and check passwords. */
  passwordHashThreads: number;
  /** PASSWORD_HASH_QUEUE: password checks waiting for a thread at most; past it 503 with Retry-After. */
  passwordHashQueue: number;
  /** SIGNIN_LIMIT_PER_MINUTE: sign-in attempts per minute from all addresses together; null: no limit. */
  signInsPerMinute: number | null;
  /** SLUICE_TEST_HOLD_HASHING_FILE (tests only): a FIFO each password job waits on; null: none. */
  testHoldHashingFile: string | null;
}

/** A HOST that only this machine reaches: the desktop's rule (no administrator needed, open sign-up). */
export function isLoopbackHost(host: string): boolean {
  return host.toLowerCase() === "localhost" || isLoopbackAddress(host);
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

/** Every bad variable at once, one sentence each, so a first start is not a game of one fix per try. */
export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string | string[]) {
    const list = typeof problems === "string" ? [problems] : problems;
    super(list.join("; "));
    this.problems = list;
  }
}

/** Variables whose value an error does not repeat: those that may carry a password or a key, and lists, whose message names the bad entry itself. */
const NOT_ECHOED = new Set(settingsTable().flatMap((row) => (row.secret || row.namesItsEntries ? [row.name] : [])));

/** The one schema of every setting: variable name -> validated value. */
const environmentSchema = z.object(
  Object.fromEntries(Object.entries(SETTINGS).map(([name, s]) => [name, s.schema])) as { [K in keyof Settings]: Settings[K]["schema"] },
)
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
  .superRefine(
    (e, ctx) => {
      // A certificate without its key (or the reverse) cannot serve HTTPS, and plain HTTP is not what was asked for.
      const pair = [
        ["TLS_CERT", "TLS_KEY", "the private key of that certificate"],
        ["TLS_KEY", "TLS_CERT", "the certificate of that key"],
      ] as const;
      for (const [name, other, what] of pair) {
        const value = e[name];
        if (value === undefined) continue;
        // Key material goes in a file, never in the environment (where it would show in process listings).
        if (/-----BEGIN|[\r\n]/.test(value)) ctx.addIssue({ code: "custom", path: [name], message: "must be the path of a PEM file, not the PEM text itself" });
        if (e[other] === undefined) ctx.addIssue({ code: "custom", path: [other], message: `must be set when ${name} is (the path of ${what}): HTTPS needs both` });
      }
    },
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
    tls: e.TLS_CERT && e.TLS_KEY ? { certFile: path.resolve(e.TLS_CERT), keyFile: path.resolve(e.TLS_KEY) } : null,
    idp: e.IDP_JWKS_URL && e.IDP_ISSUER && e.IDP_AUDIENCE ? { jwksUrl: e.IDP_JWKS_URL, issuer: e.IDP_ISSUER, audience: e.IDP_AUDIENCE } : null,
    google:
      e.GOOGLE_CLIENT_ID && e.GOOGLE_CLIENT_SECRET
        ? { clientId: e.GOOGLE_CLIENT_ID, clientSecret: e.GOOGLE_CLIENT_SECRET, authUrl: e.GOOGLE_AUTH_URL, tokenUrl: e.GOOGLE_TOKEN_URL, apiUrl: e.GOOGLE_API_URL }
        : null,
    secretsBackend: e.SLUICE_SECRETS,
    smbTimeoutMs: e.SMB_TIMEOUT_MS,
    smbAllowedNetworks: e.SMB_ALLOWED_NETWORKS ?? null,
    smbAllowedPorts: e.SMB_ALLOWED_PORTS ?? null,
    smbCheckDeadlineMs: e.SMB_CHECK_DEADLINE_S * 1000,
    ollamaRegistries: e.OLLAMA_REGISTRIES,
    databaseUrl: e.DATABASE_URL ?? null,
    redisUrl: e.REDIS_URL ?? null,
    redisSentinels: e.REDIS_SENTINELS ?? null,
    redisPrefix: e.REDIS_PREFIX,
    runWorker: e.SLUICE_WORKER === "1",
    ingestConcurrency: e.INGEST_CONCURRENCY,
    jwtSecret: e.JWT_SECRET ?? null,
    secretsKey: e.SECRETS_KEY ?? null,
    backupPassphrase: e.BACKUP_PASSPHRASE ?? null,
    modelLibraryUrl: e.MODEL_LIBRARY_URL ?? null,
    sseKeepAliveMs: e.SLUICE_SSE_KEEPALIVE_MS,
    pullRetryDelayMs: e.SLUICE_PULL_RETRY_DELAY_MS,
    logLevel: e.LOG_LEVEL,
    folderSourceRoots: e.FOLDER_SOURCE_ROOTS ?? [],
    folderSourceDotfiles: e.FOLDER_SOURCE_DOTFILES,
    dbOutageGraceMs: e.DB_OUTAGE_GRACE_S * 1000,
    searchReaders: e.SEARCH_READERS ?? defaultSearchReaders(),
    searchQueueLimit: e.SEARCH_QUEUE_LIMIT,
    searchCacheBytes: e.SEARCH_CACHE_MB * 1024 * 1024,
    ocr: { enabled: e.OCR === "on", languages: e.OCR_LANGUAGES, engine: e.OCR_ENGINE },
    schedulerTickMs: e.SLUICE_SCHEDULER_TICK_MS,
    testClockFile: e.SLUICE_TEST_CLOCK_FILE ? path.resolve(e.SLUICE_TEST_CLOCK_FILE) : null,
    trustProxy: e.TRUST_PROXY ?? false,
    signUpsPerHour: e.SIGNUP_LIMIT_PER_HOUR === 0 ? null : e.SIGNUP_LIMIT_PER_HOUR,
    smbConnectsPerMinute: e.SMB_CONNECT_LIMIT_PER_MINUTE === 0 ? null : e.SMB_CONNECT_LIMIT_PER_MINUTE,
    minFreeDiskBytes: e.MIN_FREE_DISK_MB * 1_000_000,
    adminEmails: e.ADMIN_EMAILS ?? [],
    signup: e.SIGNUP ?? (isLoopbackHost(e.HOST) ? "open" : "invite"),
    signupDomains: e.SIGNUP_DOMAINS ?? [],
    auditDays: e.AUDIT_DAYS,
    passwordHashThreads: e.PASSWORD_HASH_THREADS,
    passwordHashQueue: e.PASSWORD_HASH_QUEUE,
    signInsPerMinute: e.SIGNIN_LIMIT_PER_MINUTE === 0 ? null : e.SIGNIN_LIMIT_PER_MINUTE,
    testHoldHashingFile: e.SLUICE_TEST_HOLD_HASHING_FILE ? path.resolve(e.SLUICE_TEST_HOLD_HASHING_FILE) : null,
  };
}
