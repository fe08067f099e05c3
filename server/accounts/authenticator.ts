import type { DataSource } from "typeorm";
import type { Actor } from "../access/actor";
import { User } from "../data/entities/user.entity";
import { findById } from "../data/plain-queries";
import { UnauthorizedError } from "../errors";
import { API_KEY_PREFIX, type ApiKeysService } from "./api-keys.service";
import type { TokenService } from "./tokens";

/**
 * Who a bearer token or cookie stands for: an API key, or a session token whose user still
 * exists and whose generation is the user's current one (a password change or "sign out
 * everywhere" raised it: docs/decisions/0381-session-generation.md). One lookup by primary key per request.
 */
export class Authenticator {
  constructor(
    private readonly db: DataSource,
    private readonly tokens: TokenService,
    private readonly apiKeys: ApiKeysService,
  ) {}

  async authenticate(token: string): Promise<Actor> {
    if (token.startsWith(API_KEY_PREFIX)) return this.apiKeys.actorFor(token);
    const { actor, generation } = await this.tokens.verifySession(token);
    const user = await findById(this.db.manager, User, actor.userId);
    if (!user) throw new UnauthorizedError("Account no longer exists: sign in again");
    if (generation !== user.sessionGeneration) throw new UnauthorizedError("This session was signed out: sign in again");
    return actor;
  }
}
