import path from "node:path";
import express from "express";
import { z } from "zod";
import { parseOllamaHost } from "./net/ollama-host";
import { parseNetworkEntry } from "./net/network-entry";

/*
 * The settings table: every environment variable the server reads, with its default, schema and
 * documentation. config.ts parses the environment with it; docs/configuration.md is generated
 * from it (npm run docs:config). Adding a setting is one entry here and one field in Config.
 */

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export const SIGNUP_MODES = ["open", "invite", "off"] as const;
export type SignupMode = (typeof SIGNUP_MODES)[number];

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
function trustProxy(value: string, ctx: z.RefinementCtx): false | number | string[] {
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

/** What docs/configuration.md says of a setting (generated from this table: `npm run docs:config`). */
export interface SettingDoc {
  /** What it does, in a line. */
  description: string;
  /** The default in words, where it is computed or means "off" (the docs otherwise show the default value, or "unset"). */
  defaultText?: string;
  /** May carry a password or key: never repeated in an error message, and marked secret in the docs. */
  secret?: boolean;
  /** A value whose error names what is wrong itself (a list's bad entry, a file's path), so the whole value is not repeated either. */
  namesItsEntries?: boolean;
}

/** A setting with a default: unset or blank reads as `value` (as written in the environment), checked by the same schema. */
function withDefault<T extends z.ZodType>(value: string, schema: T, doc: SettingDoc) {
  return { doc, default: value as string | undefined, schema: setting(schema.prefault(value as never)) };
}

/** A setting without a default: unset or blank reads as undefined. */
function optional<T extends z.ZodType>(schema: T, doc: SettingDoc) {
  return { doc, default: undefined as string | undefined, schema: setting(schema.optional()) };
}

/** OLLAMA_HOST in any of Ollama's own forms, answered as a base URL (net/ollama-host.ts). */
const OLLAMA_HOST_SCHEMA = z.string().transform((value, ctx) => {
  try {
    return parseOllamaHost(value);
  } catch (error) {
    ctx.addIssue({ code: "custom", message: (error as Error).message });
    return z.NEVER;
  }
});

/**
 * Every setting, once: its variable, default, schema and documentation. The parser below and
 * docs/configuration.md (scripts/config-docs.js) are both made from it, so they cannot disagree.
 */
export const SETTINGS = {
  PORT: withDefault("8420", integer(0, 65535, "must be an integer from 0 to 65535"), { description: "listening port (`0` picks a free one and prints it)" }),
  HOST: withDefault("127.0.0.1", z.string(), { description: "bind address; `0.0.0.0` makes the API reachable from the LAN" }),
  DATA_DIR: optional(z.string(), {
    description: "SQLite database, indexes, secrets fallback; kept private to the user (the folder 0700, files 0600)",
    defaultText: "per-user app-data folder `Sluice` (`~/.config/Sluice`, `~/Library/Application Support/Sluice`, `%APPDATA%\\Sluice`)",
  }),
  OLLAMA_HOST: withDefault("http://127.0.0.1:11434", OLLAMA_HOST_SCHEMA, {
    description:
      "the Ollama model server, in any form Ollama itself takes: `127.0.0.1:11434`, `localhost:11434`, `localhost`, `0.0.0.0` (this machine), `:11435`, `[::1]:11434`, `http://host:11434`, `https://host/prefix`. Without a scheme it is `http`; without a host `127.0.0.1`; without a port `11434` (but `80`/`443` after `http://`/`https://`, as with Ollama)",
  }),
  PUBLIC_URL: optional(url(), { description: "the address browsers use; an `https:` URL also marks the cookie `Secure`", defaultText: "`http://HOST:PORT` (`https://HOST:PORT` with `TLS_CERT`)" }),
  TLS_CERT: optional(z.string(), {
    description:
      "the path of a PEM file holding the server's certificate (its chain after it, if any): with `TLS_KEY`, the API and UI are served over HTTPS on `HOST:PORT`, cookies are marked `Secure` and answers carry `Strict-Transport-Security`. Both or neither; a file that cannot be read or is not PEM, or a key that is not the certificate's, stops the start",
    defaultText: "unset (plain HTTP)",
    namesItsEntries: true,
  }),
  TLS_KEY: optional(z.string(), {
    description: "the path of the PEM file holding `TLS_CERT`'s private key (unencrypted; keep it readable by this user only)",
    defaultText: "unset (plain HTTP)",
    namesItsEntries: true,
  }),
  IDP_JWKS_URL: optional(url(), {
    description:
      "identity provider for social sign-in: its JWKS URL. Needs `IDP_ISSUER` and `IDP_AUDIENCE` (all three, or Sluice refuses to start); unset, `POST /api/auth/session` answers 503",
  }),
  IDP_ISSUER: optional(z.string(), { description: "the issuer the identity provider's tokens must name (with `IDP_JWKS_URL`)" }),
  IDP_AUDIENCE: optional(z.string(), { description: "the audience the identity provider's tokens must name: this instance (with `IDP_JWKS_URL`)" }),
  GOOGLE_CLIENT_ID: optional(z.string(), { description: "OAuth client for Google Drive: its id (with `GOOGLE_CLIENT_SECRET`; unset, Drive is off)" }),
  GOOGLE_CLIENT_SECRET: optional(z.string(), { description: "OAuth client for Google Drive: its secret (with `GOOGLE_CLIENT_ID`)", secret: true }),
  GOOGLE_AUTH_URL: withDefault("https://accounts.google.com/o/oauth2/v2/auth", url(), { description: "Google's authorization endpoint, overridden in tests (a local fake)" }),
  GOOGLE_TOKEN_URL: withDefault("https://oauth2.googleapis.com/token", url(), { description: "Google's token endpoint, overridden in tests (a local fake)" }),
  GOOGLE_API_URL: withDefault("https://www.googleapis.com", url(), { description: "Google's API address, overridden in tests (a local fake)" }),
  SLUICE_SECRETS: withDefault("auto", z.enum(["auto", "file"], { error: 'must be "auto" or "file"' }), {
    description: "`auto` keeps secrets in the OS keychain and falls back to an encrypted file; `file` always uses the file",
  }),
  SMB_TIMEOUT_MS: withDefault("15000", integer(1, Number.MAX_SAFE_INTEGER, "must be a positive integer"), {
    description: "limit for connecting to an SMB server and for each request to it; a silent server fails after this",
  }),
  SMB_ALLOWED_NETWORKS: optional(
    z.string().transform((value, ctx) => {
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
    }),
    {
      description:
        "the networks SMB sources may point at: IPv4/IPv6 addresses and CIDR networks separated by commas, e.g. `192.168.10.0/24, 10.20.0.5, fd00::/8`; a server name is checked by the address it resolves to, at every connection",
      defaultText: "unset (any address)",
      namesItsEntries: true,
    },
  ),
  SMB_CHECK_DEADLINE_S: withDefault("25", integer(1, 30, "must be a whole number of seconds from 1 to 30"), {
    description:
      "the most a source's connection check (creation), a share listing, a Windows account's link or one batch of a run's refresh of linked accounts (16 accounts) may take, whatever the server does (answers STATUS_PENDING, lists without end, drips replies); past it the check answers as a server that did not answer in time",
  }),
  SMB_ALLOWED_PORTS: optional(
    z.string().transform((value, ctx) => {
      const entries = value.split(/[\s,]+/).filter(Boolean);
      const ports: number[] = [];
      for (const entry of entries) {
        if (/^\d{1,5}$/.test(entry) && Number(entry) >= 1 && Number(entry) <= 65535) ports.push(Number(entry));
        else ctx.addIssue({ code: "custom", message: `must be ports from 1 to 65535 separated by commas; "${entry}" is not one` });
      }
      if (entries.length === 0) ctx.addIssue({ code: "custom", message: "must list at least one port" });
      return ports;
    }),
    {
      description:
        "the ports SMB sources may dial, separated by commas, e.g. `445, 10445`; set, it applies on the desktop too",
      defaultText: "unset (any port on the desktop; `445` and `139` when `HOST` is not a loopback address)",
      namesItsEntries: true,
    },
  ),
  OLLAMA_REGISTRIES: withDefault(
    "registry.ollama.ai",
    z.string().transform((value, ctx) => {
      const entries = value.split(/[\s,]+/).filter(Boolean).map((entry) => entry.toLowerCase());
      for (const entry of entries) {
        if (!/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:\d{1,5})?$/.test(entry)) ctx.addIssue({ code: "custom", message: `entries must be host names such as registry.example.com or registry.example.com:5000; "${entry}" is not one` });
      }
      return entries;
    }),
    {
      description:
        "the registries a model name may pull from when it names one (`host[:port]/namespace/model`), separated by commas; a name with any other registry host is refused, so nobody can make the model server fetch from an address of their choosing. Names without a host (`llama3.2`, `namespace/model`) use Ollama's own registry",
      namesItsEntries: true,
    },
  ),
  DATABASE_URL: optional(
    z
      .string()
      .refine((value) => ["postgres:", "postgresql:"].includes(protocolOf(value)), { error: DATABASE_URL_MESSAGE, abort: true })
      .refine((value) => new URL(value).hostname !== "" || new URL(value).searchParams.has("host"), { error: "must name a host" }),
    {
      description: "`postgres://user:password@host:5432/db` (or `postgresql://`): storage and search on PostgreSQL (a team server); unset keeps SQLite under `DATA_DIR`",
      secret: true,
    },
  ),
  REDIS_URL: optional(
    z
      .string()
      .refine((value) => ["redis:", "rediss:"].includes(protocolOf(value)), { error: "must be a redis:// or rediss:// URL", abort: true })
      .refine((value) => /^\/?\d*$/.test(new URL(value).pathname), { error: "must have a database number as its path, if any (e.g. redis://host:6379/2)" }),
    {
      description:
        "`redis://` or `rediss://` (TLS; user, password and database number in the URL as usual): team server mode, the ingestion queue on BullMQ shared by every process, sign-in counts and model pulls shared. A `rediss://` server's certificate is checked; for a private CA, give Node its PEM file as `NODE_EXTRA_CA_CERTS`",
      secret: true,
    },
  ),
  REDIS_SENTINELS: optional(
    z.string().transform((raw, ctx) =>
      raw.split(",").flatMap((entry) => {
        const match = /^\s*(\[[0-9a-fA-F:.]+\]|[^\s:]+):(\d{1,5})\s*$/.exec(entry);
        const port = Number(match?.[2]);
        if (match && port >= 1 && port <= 65535) return [{ host: match[1].replace(/^\[|\]$/g, ""), port }];
        ctx.addIssue({ code: "custom", message: "must be host:port pairs separated by commas" });
        return [];
      }),
    ),
    { description: "`host:port,host:port`: reach Redis through these Sentinels; `REDIS_URL`'s host is then the master group name (`redis://:PASSWORD@mymaster/0`, no port)" },
  ),
  REDIS_PREFIX: withDefault("sluice", z.string().regex(/^[A-Za-z0-9_.-]{1,100}$/, { error: 'must be 1 to 100 letters, digits, "_", "." or "-"' }), {
    description: "prefix of every Redis key, so several Sluice instances can share one Redis",
  }),
  SLUICE_WORKER: withDefault("1", z.enum(["0", "1"], { error: 'must be "0" or "1"' }), {
    description: "in team mode, `0` makes this API process take no ingestion jobs itself (leave them to `npm run worker`)",
  }),
  INGEST_CONCURRENCY: withDefault("1", integer(1, 64, "must be an integer from 1 to 64"), {
    description:
      "team mode (`REDIS_URL`) only: ingestion jobs of different pipelines running at once across the instance, 1 to 64; the same on every process that takes jobs. Above 1 without `REDIS_URL` is a configuration error",
  }),
  JWT_SECRET: optional(z.string().min(32, { error: "must be at least 32 characters" }), {
    description: "at least 32 characters: a fixed session signing secret, shared by API processes on several machines (default: generated once and kept in the secret store, which on a team server is the shared database)",
    secret: true,
  }),
  SECRETS_KEY: optional(
    z.union([z.string().regex(/^[0-9a-fA-F]{64}$/).transform((hex) => Buffer.from(hex, "hex")), z.string().regex(/^[A-Za-z0-9+/]{43}=?$/).transform((b64) => Buffer.from(b64, "base64"))], {
      error: SECRETS_KEY_MESSAGE,
    }),
    {
      description:
        "team server (`DATABASE_URL`) only: 32 random bytes as base64 or 64 hex digits (`openssl rand -base64 32`), the same on every machine; seals the secrets kept in the shared database (unset: a key made once and kept on this machine only)",
      secret: true,
    },
  ),
  BACKUP_PASSPHRASE: optional(z.string().min(12, { error: "must be at least 12 characters" }), {
    description:
      "the passphrase `npm run backup` seals every file of a backup with (scrypt + AES-256-GCM), the secrets' key included, and `npm run restore` opens it with; `--passphrase-file FILE` does the same. Unset: a plain backup, the secrets' key left out",
    secret: true,
  }),
  MODEL_LIBRARY_URL: optional(z.url({ error: "must be a URL" }).transform((value) => new URL(value).toString()), {
    description: "a JSON model catalog (`{\"models\": [...]}` or an array) to refresh the model library from; unset keeps the catalog that ships with the app",
  }),
  SLUICE_SSE_KEEPALIVE_MS: withDefault("10000", integer(1, Number.MAX_SAFE_INTEGER, "must be a positive integer"), {
    description: "an event stream (a model pull, an answer) sends a `: keep-alive` comment after this long without an event",
  }),
  SLUICE_PULL_RETRY_DELAY_MS: withDefault("1000", integer(1, Number.MAX_SAFE_INTEGER, "must be a positive integer"), {
    description: "wait before retrying a failed model download (doubles per retry)",
  }),
  LOG_LEVEL: withDefault(
    "info",
    z
      .string()
      .transform((value) => value.toLowerCase())
      .pipe(z.enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(", ")}` })),
    { description: "the least severe level logged: `fatal`, `error`, `warn`, `info` (one line per request), `debug`, `trace` or `silent`" },
  ),
  DB_OUTAGE_GRACE_S: withDefault("60", integer(0, 86_400, "must be a whole number of seconds from 0 to 86400"), {
    description: "team server: how long a running ingestion job waits for an unreachable database, retrying its writes, before it fails with `Database connection lost`",
  }),
  SEARCH_READERS: optional(integer(1, 64, "must be an integer from 1 to 64"), {
    description: "desktop: threads that run searches and document pages, each with read-only connections to the index files",
    defaultText: "one per core, at most 4",
  }),
  SEARCH_QUEUE_LIMIT: withDefault("256", integer(0, 100_000, "must be an integer from 0 to 100000"), {
    description: "desktop: searches waiting for a reader thread at most; past it a search answers 503 with `Retry-After: 1`",
  }),
  SEARCH_CACHE_MB: withDefault("32", integer(0, 4096, "must be a whole number of megabytes from 0 to 4096"), {
    description: "desktop: memory for recent search results; an entry answers only while its collection's index file is unchanged (any write, by any process, makes it stale); `0`: no cache",
  }),
  OCR: withDefault("on", z.enum(["on", "off"], { error: 'must be "on" or "off"' }), {
    description:
      "`off`: pictures (PNG, JPEG, TIFF, BMP, WebP, GIF) and PDF pages without a text layer are not read with OCR; such files are skipped with the reason `needs OCR, which is off (OCR=off)`, and a PDF keeps only its text pages",
  }),
  OCR_LANGUAGES: withDefault(
    "eng",
    z
      .string()
      .transform((value) => value.split(/[+,\s]+/).filter(Boolean))
      .pipe(z.array(z.string().regex(/^[a-z]{3}(?:_[a-z]+)?$/, { error: "must be Tesseract language codes such as eng, deu, fra, chi_sim" })).min(1, { error: "must name at least one language" })),
    {
      description:
        "the languages OCR reads, Tesseract's codes joined by `+` (`eng+deu+fra`); each needs its data: the npm package `@tesseract.js-data/<code>` for tesseract.js, or the `tesseract` command's language pack (Debian `tesseract-ocr-deu`)",
    },
  ),
  OCR_ENGINE: withDefault("auto", z.enum(["auto", "tesseract", "tesseract.js"], { error: 'must be "auto", "tesseract" or "tesseract.js"' }), {
    description:
      "which Tesseract reads pictures: `auto` uses the `tesseract` command (Tesseract 4 or 5) when it is installed with every language of `OCR_LANGUAGES` (about 1.7 times faster here), else tesseract.js (WebAssembly, shipped with the app)",
  }),
  SLUICE_SCHEDULER_TICK_MS: withDefault("15000", integer(10, 3_600_000, "must be an integer from 10 to 3600000"), {
    description: "how often each process looks for pipeline schedules that are due",
  }),
  SLUICE_TEST_CLOCK_FILE: optional(z.string(), { description: "tests only: a file whose ISO 8601 text is the time schedules read; unset: the system clock" }),
  MIN_FREE_DISK_MB: withDefault("100", integer(0, 1_000_000_000, "must be a whole number of megabytes (0 or more)"), {
    description:
      "desktop (SQLite) only: an ingestion job with less free space than this in `DATA_DIR` fails at once, before it writes anything, and a running one stops when the space falls below it",
  }),
  FOLDER_SOURCE_ROOTS: optional(
    z.string().transform((value, ctx) => {
      const entries = value.split(path.delimiter).map((entry) => entry.trim()).filter(Boolean);
      for (const entry of entries) {
        if (!path.isAbsolute(entry)) ctx.addIssue({ code: "custom", message: `entries must be absolute paths; "${entry}" is not` });
      }
      return entries.map((entry) => path.resolve(entry));
    }),
    {
      description: "folders a folder source may read, absolute, separated by `:` (`;` on Windows), e.g. `/home/me/Documents:/mnt/nas`; unset, the folder kind is off (creation answers 503)",
      namesItsEntries: true,
    },
  ),
  FOLDER_SOURCE_DOTFILES: withDefault("skip", z.enum(["skip", "index"], { error: 'must be "skip" or "index"' }), {
    description:
      "whether folder sources read dot-entries (names starting with `.`: `.git`, `.ssh`, `.env`, ...): `skip` never walks or indexes them, and refuses a source folder inside one; `index` reads them like any other file or folder. Sluice's own `DATA_DIR` is never read, either way",
  }),
  TRUST_PROXY: optional(z.string().transform(trustProxy), {
    description:
      "behind a reverse proxy: which proxies' `X-Forwarded-For` to believe, so sign-in limits see each client's own address. A hop count (`1`: the one proxy in front), or addresses / CIDR ranges / `loopback`, `linklocal`, `uniquelocal`, comma-separated (`10.0.0.0/8,127.0.0.1`). Off, the connection's address is the client's",
    defaultText: "unset (off)",
  }),
  SMB_CONNECT_LIMIT_PER_MINUTE: withDefault("10", integer(0, 1_000_000, "must be an integer from 0 (no limit) to 1000000"), {
    description: "SMB connection attempts (source creations, share listings and Windows account links) each user may make per minute (`0`: no limit); past it 429 with `Retry-After`",
  }),
  ADMIN_EMAILS: optional(
    z.string().transform((value, ctx) => {
      const emails = value.split(",").map((entry) => entry.trim().toLowerCase()).filter(Boolean);
      for (const email of emails) if (!z.email().safeParse(email).success) ctx.addIssue({ code: "custom", message: `entries must be email addresses separated by commas; "${email}" is not` });
      return emails;
    }),
    {
      description:
        "the instance's administrators, email addresses separated by commas (they may always sign up). Set, or with a `HOST` that is not a loopback address, deleting, pulling and refreshing catalog models and creating folder sources need an administrator. Unset, the first account of the instance is its administrator. Administrators alone read the audit trail (`GET /api/audit`), make invitations and may delete other accounts",
      defaultText: "unset: the first account of the instance is its administrator",
      namesItsEntries: true,
    },
  ),
  SIGNUP: optional(z.enum(SIGNUP_MODES, { error: 'must be "open", "invite" or "off"' }), {
    description:
      "who may create an account: `open` (anyone, within `SIGNUP_DOMAINS`), `invite` (only with an administrator's invitation), `off` (nobody). `ADMIN_EMAILS` addresses, and without them the first account of a new instance, may always sign up",
    defaultText: "`open` with a loopback `HOST`, `invite` otherwise",
  }),
  SIGNUP_DOMAINS: optional(
    z.string().transform((value, ctx) => {
      const domains = value.split(",").map((entry) => entry.trim().toLowerCase().replace(/^@/, "")).filter(Boolean);
      for (const domain of domains) if (!/^[a-z0-9-]+(\.[a-z0-9-]+)+$/.test(domain)) ctx.addIssue({ code: "custom", message: `entries must be domain names such as corp.example, separated by commas; "${domain}" is not` });
      return domains;
    }),
    { description: "open sign-up accepts only addresses at these domains, e.g. `corp.example,lab.corp.example` (invitations may name any address)", defaultText: "unset (any domain)", namesItsEntries: true },
  ),
  SIGNUP_LIMIT_PER_HOUR: withDefault("20", integer(0, 1_000_000, "must be an integer from 0 (no limit) to 1000000"), {
    description: "sign-up attempts allowed per client address per hour (`0`: no limit); raise it to sign up many people behind one address",
  }),
  SLUICE_TEST_HOLD_HASHING_FILE: optional(z.string(), { description: "tests only: a FIFO every password hashing job reads before it runs, so a test holds the hashing threads; unset: none" }),
  AUDIT_DAYS: withDefault("90", integer(1, 36_500, "must be a whole number of days from 1 to 36500"), {
    description: "audit events older than this many days are deleted",
  }),
  PASSWORD_HASH_THREADS: withDefault("1", integer(1, 16, "must be an integer from 1 to 16"), {
    description: "worker threads that hash and check passwords (bcrypt cost 12, about 0.2 s each), off the API's thread",
  }),
  PASSWORD_HASH_QUEUE: withDefault("32", integer(1, 10_000, "must be an integer from 1 to 10000"), {
    description: "password checks waiting for a hashing thread at most; past it sign-in, sign-up and password change answer 503 with `Retry-After`",
  }),
  SIGNIN_LIMIT_PER_MINUTE: withDefault("300", integer(0, 1_000_000, "must be an integer from 0 (no limit) to 1000000"), {
    description: "sign-in attempts per minute from all addresses together (`0`: no limit): a cap that many addresses cannot get around; past it 429 with `Retry-After`",
  }),
};

export type Settings = typeof SETTINGS;

/** One row of the settings table, for docs/configuration.md. */
export interface SettingRow extends SettingDoc {
  name: string;
  /** As written in the environment; undefined: unset. */
  default: string | undefined;
}

/** The settings table, in order, for the documentation (server/config-docs.ts). */
export function settingsTable(): SettingRow[] {
  return Object.entries(SETTINGS).map(([name, s]) => ({ name, default: s.default, ...s.doc }));
}
