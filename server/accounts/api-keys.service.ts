import crypto from "node:crypto";
import type { DataSource } from "typeorm";
import { ApiKey } from "../data/entities/api-key.entity";
import { User } from "../data/entities/user.entity";
import { NotFoundError, UnauthorizedError } from "../errors";
import type { Actor } from "../access/actor";

/** Every key starts so: the auth middleware tells a key from a session token by it, and a leaked one is easy to recognise. */
export const API_KEY_PREFIX = "sluice_key_";
/** The last-used time is written at most this often per key, so a busy script is not a write per request. */
const LAST_USED_EVERY_MS = 60_000;

/** A key is 32 random bytes: SHA-256 is enough to keep (no password hashing needed for a secret nobody chose). */
export function hashApiKey(key: string): string {
  return crypto.createHash("sha256").update(key, "utf8").digest("hex");
}

export interface CreatedApiKey {
  apiKey: ApiKey;
  /** The key itself, answered once; only its hash is kept. */
  key: string;
}

/** API keys: made, listed and revoked by their owner; accepted as a bearer token with the owner's rights. */
export class ApiKeysService {
  constructor(private readonly db: DataSource) {}

  async create(actor: Actor, name: string): Promise<CreatedApiKey> {
    const key = API_KEY_PREFIX + crypto.randomBytes(32).toString("base64url");
    const apiKey = this.db.manager.create(ApiKey, {
      id: crypto.randomUUID(),
      userId: actor.userId,
      name,
      keyHash: hashApiKey(key),
      createdAt: new Date(),
      lastUsedAt: null,
    });
    await this.db.manager.insert(ApiKey, apiKey);
    return { apiKey, key };
  }

  list(actor: Actor): Promise<ApiKey[]> {
    return this.db.manager.find(ApiKey, { where: { userId: actor.userId }, order: { createdAt: "ASC", id: "ASC" } });
  }

  /** Another user's key and a missing one answer alike (404). */
  async revoke(actor: Actor, id: string): Promise<ApiKey> {
    const apiKey = await this.db.manager.findOne(ApiKey, { where: { id, userId: actor.userId } });
    if (!apiKey) throw new NotFoundError("API key not found");
    await this.db.manager.delete(ApiKey, { id, userId: actor.userId });
    return apiKey;
  }

  /** The actor a key stands for; a revoked or unknown key is a 401. */
  async actorFor(key: string): Promise<Actor> {
    const apiKey = await this.db.manager.findOne(ApiKey, { where: { keyHash: hashApiKey(key) } });
    const user = apiKey ? await this.db.manager.findOne(User, { where: { id: apiKey.userId }, select: { id: true, email: true } }) : null;
    if (!apiKey || !user) throw new UnauthorizedError("Invalid or revoked API key");
    const now = new Date();
    if (!apiKey.lastUsedAt || now.getTime() - apiKey.lastUsedAt.getTime() >= LAST_USED_EVERY_MS) {
      await this.db.manager.update(ApiKey, { id: apiKey.id }, { lastUsedAt: now });
    }
    return { userId: user.id, email: user.email, apiKeyId: apiKey.id };
  }
}
