import type * as api from "../api";

/**
 * The group a form's new collection or source goes to: the one chosen while it is still among
 * the caller's groups, else the first. Derived at each render rather than kept from the form's
 * first one: a form can mount on a cached list of groups that is refreshed a moment later (a
 * group just created elsewhere), and what the select shows must be what is sent.
 */
export function ownerGroup(chosen: string, groups: readonly api.Group[]): string {
  return groups.some((g) => g.id === chosen) ? chosen : (groups[0]?.id ?? "");
}
