import http from "node:http";
import https from "node:https";

/**
 * What both Google clients share on the wire: timeouts, gaxios' retry settings, direct
 * connections, and how a failed request (a GaxiosError) reads as "Google is unavailable".
 */

/** Every metadata and token call; Google answers these in well under a second. */
export const REQUEST_TIMEOUT_MS = 30_000;
/** A whole download or export (gaxios' timeout also covers the body): 200 MB at ~350 KB/s. */
export const DOWNLOAD_TIMEOUT_MS = 10 * 60_000;

const RETRIES = 4;
const FIRST_RETRY_DELAY_MS = 200;
const MAX_RETRY_DELAY_MS = 10_000;

/** Google could not be reached, or kept answering 429/5xx past the retry budget. */
export class GoogleUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "GoogleUnavailableError";
  }
}

/**
 * Connections go straight to Google (or the override), as they did over fetch: left to itself
 * gaxios sends every call through HTTP(S)_PROXY, the loopback test fake's included.
 */
export function directAgent(url: URL): http.Agent {
  return url.protocol === "http:" ? http.globalAgent : https.globalAgent;
}

/** gaxios' RetryConfig, spelled out: the two clients bring two gaxios versions whose types do not mix. */
export interface RetryConfig {
  retry: number;
  noResponseRetries: number;
  retryDelay: number;
  maxRetryDelay: number;
  statusCodesToRetry: number[][];
  retryBackoff: (error: { response?: { headers?: Headers } }, delay: number) => Promise<void>;
}

/**
 * gaxios retries 408, 429 and 5xx answers and requests that got no answer, with its exponential
 * backoff (200 ms, then 0.5 s, 1.5 s, 3.5 s). It ignores Retry-After, so the wait honours it here.
 * A fresh object per client: gaxios keeps its attempt counter in a copy, never in this.
 */
export function retryConfig(): RetryConfig {
  return {
    retry: RETRIES,
    noResponseRetries: RETRIES,
    retryDelay: FIRST_RETRY_DELAY_MS,
    maxRetryDelay: MAX_RETRY_DELAY_MS,
    statusCodesToRetry: [
      [408, 408],
      [429, 429],
      [500, 599],
    ],
    retryBackoff: (error, delay) => new Promise<void>((resolve) => setTimeout(resolve, retryAfterMs(error.response?.headers) ?? delay)),
  };
}

/** Retry-After in seconds, capped like the other waits; an HTTP date falls back to the backoff. */
function retryAfterMs(headers: Headers | undefined): number | null {
  const seconds = Number(headers?.get("retry-after") ?? NaN);
  return Number.isFinite(seconds) && seconds >= 0 ? Math.min(seconds * 1000, MAX_RETRY_DELAY_MS) : null;
}

/** A failure of the clients' HTTP layer: `response` when Google answered, none when it did not. */
export interface GoogleHttpFailure {
  response?: { status: number; data?: unknown };
  code?: string | number;
}

/**
 * gaxios' errors, recognised by shape: the Drive client and the OAuth client each bring their
 * own gaxios version, so `instanceof` holds for one of them only.
 */
export function httpFailure(error: unknown): GoogleHttpFailure | null {
  return error instanceof Error && "config" in error ? (error as GoogleHttpFailure) : null;
}

/** True when the failure means Google is down or overloaded rather than refusing the request. */
export function isUnavailable(failure: GoogleHttpFailure): boolean {
  const status = failure.response?.status;
  return status === undefined || status === 408 || status === 429 || status >= 500;
}

/** Names what went wrong without the request's URL (a revocation carries the token in it). */
export function unavailable(service: string, failure: GoogleHttpFailure): GoogleUnavailableError {
  const status = failure.response?.status;
  if (status !== undefined) return new GoogleUnavailableError(`${service} answered ${status}`);
  const reason = failure.code === undefined ? "no answer in time" : String(failure.code);
  return new GoogleUnavailableError(`Google could not be reached (${reason})`);
}
