import type { Config } from "../config";

/** The model catalog's settings, taken from the validated configuration (config.ts reads the environment). */
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
  /** OLLAMA_REGISTRIES: the registry hosts a pulled model's name may carry. */
  registries: string[];
}

export function modelsOptions(config: Config): ModelsOptions {
  return {
    ollamaHost: config.ollamaHost,
    dataDir: config.dataDir,
    libraryUrl: config.modelLibraryUrl,
    keepAliveMs: config.sseKeepAliveMs,
    retryDelayMs: config.pullRetryDelayMs,
    registries: config.ollamaRegistries,
  };
}
