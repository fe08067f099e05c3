import type { User } from "../data/entities/user.entity";
import { isoNoZone } from "../time";

/** Entity -> JSON. Fields are picked one by one so a secret column (the password hash) can never leak by accident. */
/** GET /users/me: the user and whether they administer the instance. */
export function presentMe(user: User, isAdmin: boolean) {
  return { ...presentUser(user), is_admin: isAdmin };
}

export function presentUser(user: User) {
  return {
    id: user.id,
    email: user.email,
    display_name: user.displayName,
    avatar_url: user.avatarUrl,
    created_at: isoNoZone(user.createdAt),
    updated_at: isoNoZone(user.updatedAt),
    last_sign_in_at: isoNoZone(user.lastSignInAt),
  };
}

export function presentToken(token: string) {
  return { access_token: token, token_type: "bearer" as const };
}
