import crypto from "node:crypto";
import { Redis, type RedisOptions } from "ioredis";
import type { Config } from "../config";
import type { Logger } from "../logger";

/** Where Redis is: REDIS_URL, and with REDIS_SENTINELS the Sentinels that name its master. */
export type RedisSettings = { redisUrl: string; redisSentinels: Config["redisSentinels"] };

/**
 * A command not answered within this (Redis unreachable, or silent) fails, so triggers answer
 * 503 and sign-ins an error instead of hanging. BullMQ's worker polls with a shorter block
 * (WORKER_BLOCK_SECONDS in bullmq-job-queue.ts), since its blocking connection inherits this.
 */
const REDIS_TIMEOUT_MS = 5_000;
/** Reconnect back-off: 200 ms doubling per attempt up to this, for as long as Redis is away. */
const RECONNECT_MAX_MS = 3_000;

export function reconnectDelay(attempt: number): number {
  return Math.min(100 * 2 ** Math.min(attempt, 10), RECONNECT_MAX_MS);
}

/** The one place that turns the configuration into ioredis options. */
export function redisOptions(settings: RedisSettings): RedisOptions {
  const url = new URL(settings.redisUrl);
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const options: RedisOptions = {
    db: Number(url.pathname.slice(1) || 0),
    // BullMQ requires it on the worker's blocking connection, a duplicate of this one; a command
    // instead fails after commandTimeout, while ioredis keeps reconnecting.
    maxRetriesPerRequest: null,
    commandTimeout: REDIS_TIMEOUT_MS,
    connectTimeout: REDIS_TIMEOUT_MS,
    retryStrategy: reconnectDelay,
  };
  if (url.username) options.username = decodeURIComponent(url.username);
  if (url.password) options.password = decodeURIComponent(url.password);
  // rediss://: the certificate is checked against Node's CAs and NODE_EXTRA_CA_CERTS; no servername
  // is set, so Node sends SNI for host names only (RFC 6066 forbids IP addresses there).
  if (url.protocol === "rediss:") options.tls = {};
  if (!settings.redisSentinels) return { ...options, host, port: Number(url.port || 6379) };
  // The Sentinels answer the master's address; TLS and the password apply to the master.
  return { ...options, sentinels: settings.redisSentinels, name: host, enableTLSForSentinelMode: url.protocol === "rediss:" };
}

/**
 * The process's connection for every command: the BullMQ queue and worker, pull locks, sign-in
 * counts. Its name is unique to the process, so other processes can tell from CLIENT LIST that
 * it is alive (the ingestion queue's sweep).
 */
export function openRedis(settings: RedisSettings, logger: Logger): Redis {
  const redis = new Redis({ ...redisOptions(settings), connectionName: `sluice-${crypto.randomUUID()}` });
  logConnectionErrors(redis, logger);
  return redis;
}

/** A connection for pub/sub (a subscribed connection carries nothing else); it connects on first use. */
export function openSubscriber(redis: Redis, logger: Logger): Redis {
  const subscriber = redis.duplicate({ connectionName: `${redis.options.connectionName}-subscriber`, lazyConnect: true });
  logConnectionErrors(subscriber, logger);
  return subscriber;
}

/** ioredis retries on its own; the log gets each distinct error once per outage, not one per attempt. */
function logConnectionErrors(redis: Redis, logger: Logger): void {
  let last = "";
  redis.on("error", (error: Error) => {
    const message = explainRedisError(error);
    if (message !== last) logger.warn(`Redis: ${message}`);
    last = message;
  });
  redis.on("ready", () => (last = ""));
}

/**
 * A socket or TLS error of a connection (not a command's): the shared connection's own listener
 * logs it once per outage, so listeners that BullMQ forwards the same errors to can skip it.
 */
export function isConnectionError(error: Error & { code?: string; syscall?: string }): boolean {
  return error.syscall !== undefined || isCertificateError(error);
}

function isCertificateError(error: Error & { code?: string }): boolean {
  return /CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)/.test(error.code ?? "");
}

/** Certificate errors say what to do about them: they do not go away by retrying. */
function explainRedisError(error: Error & { code?: string }): string {
  if (!isCertificateError(error)) return error.message;
  return `the Redis server's TLS certificate is not trusted (${error.code}: ${error.message}); if it is signed by a private CA, give that CA's PEM file to Sluice as NODE_EXTRA_CA_CERTS`;
}
