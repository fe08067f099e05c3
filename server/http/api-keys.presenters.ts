import type { ApiKey } from "../data/entities/api-key.entity";
import { isoNoZone } from "../time";

/** A key in the list: never the key, never its hash. */
export function presentApiKey(apiKey: ApiKey) {
  return {
    id: apiKey.id,
    name: apiKey.name,
    created_at: isoNoZone(apiKey.createdAt),
    last_used_at: isoNoZone(apiKey.lastUsedAt),
  };
}

/** The one answer that carries the key itself: the creation's. */
export function presentCreatedApiKey(apiKey: ApiKey, key: string) {
  return { id: apiKey.id, name: apiKey.name, key };
}
