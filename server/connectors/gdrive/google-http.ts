/** HTTP to Google with retries: 429 and 5xx (and network failures) are retried with exponential backoff. */

export const MAX_ATTEMPTS = 5;
const BASE_DELAY_MS = 200;
const MAX_DELAY_MS = 10_000;

/** Google could not be reached, or kept answering 429/5xx past the retry budget. */
export class GoogleUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "GoogleUnavailableError";
  }
}

function retryable(status: number): boolean {
  return status === 429 || status >= 500;
}

function delayFor(attempt: number, retryAfter: string | null): number {
  const seconds = retryAfter !== null ? Number(retryAfter) : NaN;
  if (Number.isFinite(seconds) && seconds >= 0) return Math.min(seconds * 1000, MAX_DELAY_MS);
  const backoff = BASE_DELAY_MS * 2 ** attempt;
  return Math.min(backoff / 2 + Math.random() * (backoff / 2), MAX_DELAY_MS);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * fetch() that retries retryable answers. The last retryable answer is returned as is when the
 * budget runs out, so callers see the real status; only network failures throw.
 */
export async function fetchWithRetry(url: string, init: RequestInit = {}): Promise<Response> {
  let lastError: unknown = null;
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    let res: Response;
    try {
      res = await fetch(url, { ...init, redirect: "follow" });
    } catch (error) {
      lastError = error;
      if (attempt < MAX_ATTEMPTS - 1) await sleep(delayFor(attempt, null));
      continue;
    }
    if (!retryable(res.status) || attempt === MAX_ATTEMPTS - 1) return res;
    const retryAfter = res.headers.get("retry-after");
    await res.body?.cancel().catch(() => undefined);
    await sleep(delayFor(attempt, retryAfter));
  }
  throw new GoogleUnavailableError(`Google could not be reached: ${(lastError as Error)?.message ?? "unknown error"}`);
}
