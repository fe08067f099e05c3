/**
 * Settings of the model catalog read from the environment. They belong in config.ts
 * (loadConfig) once it can be edited; until then this is the one place that reads them.
 */
export interface ModelsOptions {
  ollamaHost: string;
  /** Where a refreshed library catalog is kept (DATA_DIR); null keeps it in memory only. */
  dataDir: string | null;
  /** MODEL_LIBRARY_URL: a JSON catalog ({models:[...]} or an array) to refresh the library from. */
  libraryUrl: string | null;
  /** SLUICE_SSE_KEEPALIVE_MS: a `: keep-alive` comment after this long without an event. */
  keepAliveMs: number;
  /** SLUICE_PULL_RETRY_DELAY_MS: wait before retrying a failed download (doubles per retry). */
  retryDelayMs: number;
}

function positiveInt(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw.trim() === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer, got "${raw}"`);
  return value;
}

function optionalUrl(name: string, raw: string | undefined): string | null {
  const value = raw?.trim();
  if (!value) return null;
  try {
    return new URL(value).toString();
  } catch {
    throw new Error(`${name} must be a URL, got "${value}"`);
  }
}

export function modelsOptionsFromEnv(ollamaHost: string, dataDir: string | null, env: NodeJS.ProcessEnv = process.env): ModelsOptions {
  return {
    ollamaHost,
    dataDir,
    libraryUrl: optionalUrl("MODEL_LIBRARY_URL", env.MODEL_LIBRARY_URL),
    keepAliveMs: positiveInt("SLUICE_SSE_KEEPALIVE_MS", env.SLUICE_SSE_KEEPALIVE_MS, 10_000),
    retryDelayMs: positiveInt("SLUICE_PULL_RETRY_DELAY_MS", env.SLUICE_PULL_RETRY_DELAY_MS, 1_000),
  };
}
