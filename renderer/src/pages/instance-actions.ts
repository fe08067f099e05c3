import { useQuery } from "@tanstack/react-query";
import { queries } from "../api";

/**
 * Whether the viewer may do this instance's instance-wide actions: pull, delete and refresh
 * catalog models, add folder sources (docs/decisions/0472-admin-only-controls-hidden.md).
 * `allowed`: a desktop without ADMIN_EMAILS, or an administrator; `administrators`: a member of a
 * guarded server (LAN or ADMIN_EMAILS, GET /instance `administrators_only`), whose buttons would
 * only answer 403; `pending` until both reads answer, so no button shows and then goes.
 */
export type InstanceActions = "allowed" | "administrators" | "pending";

export function useInstanceActions(): InstanceActions {
  const instance = useQuery(queries.instance());
  const me = useQuery(queries.me());
  if (!me.data) return "pending";
  if (me.data.is_admin) return "allowed";
  // A server that did not say whether it is guarded is taken as guarded: a hidden button is safer than a 403.
  if (instance.isError) return "administrators";
  if (!instance.data) return "pending";
  return instance.data.administrators_only ? "administrators" : "allowed";
}
