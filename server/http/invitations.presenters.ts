import type { Invitation } from "../data/entities/invitation.entity";
import type { SignupMode } from "../settings";
import { isoNoZone } from "../time";

function invitationState(invitation: Invitation): "pending" | "used" | "expired" {
  if (invitation.usedAt) return "used";
  return invitation.expiresAt.getTime() <= Date.now() ? "expired" : "pending";
}

/** An invitation as listed: never its link (only its hash is kept). */
export function presentInvitation(invitation: Invitation) {
  return {
    id: invitation.id,
    email: invitation.email,
    group_id: invitation.groupId,
    state: invitationState(invitation),
    created_at: isoNoZone(invitation.createdAt),
    expires_at: isoNoZone(invitation.expiresAt),
    used_at: isoNoZone(invitation.usedAt),
  };
}

/** A new invitation: the only answer that carries its link. */
export function presentIssuedInvitation(invitation: Invitation, link: string) {
  return { ...presentInvitation(invitation), link };
}

/** GET /signup: what the sign-up screen offers, and the invitation its link names. */
export function presentSignupStatus(signup: SignupMode, firstAccount: boolean, invitation: Invitation | null) {
  return {
    signup,
    first_account: firstAccount,
    invitation: invitation ? { email: invitation.email, expires_at: isoNoZone(invitation.expiresAt) } : null,
  };
}
