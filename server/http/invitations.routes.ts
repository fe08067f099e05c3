import type { Router } from "express";
import type { InvitationsService } from "../accounts/invitations.service";
import { actorOf } from "../routing/auth.middleware";
import { documentedRouter } from "../routing/documented-router";
import { idParams } from "../routing/common.schemas";
import type { AuditLog } from "../audit/audit";
import { recordAction } from "../routing/audit-event";
import { presentInvitation, presentIssuedInvitation } from "./invitations.presenters";
import { createInvitationBody } from "./invitations.schemas";

const ADMIN_ONLY = "The caller is not an administrator of this instance";

export function invitationsRoutes(invitations: InvitationsService, audit: AuditLog): Router {
  const routes = documentedRouter("Invitations");

  routes.post("/invitations", {
    summary: "Invite an address to sign up: a single-use link that expires in 7 days (administrators)",
    body: createInvitationBody,
    status: 201,
    returns: "The invitation with its `link`, shown this once",
    errors: { 403: ADMIN_ONLY, 409: "An account with this email exists, or sign-up is off (SIGNUP=off)" },
  }, async ({ body }, req, res) => {
    const { invitation, link } = await invitations.invite(actorOf(res), body.email);
    // The address, never the link: the link is a secret.
    await recordAction(audit, req, res, { action: "invitation.created", objectId: invitation.id, detail: invitation.email });
    res.status(201).json(presentIssuedInvitation(invitation, link));
  });

  routes.get("/invitations", {
    summary: "Every invitation, newest first (administrators)",
    returns: "A list of invitations (`state`: pending, used or expired), never their links",
    errors: { 403: ADMIN_ONLY },
  }, async (_input, _req, res) => {
    res.json((await invitations.list(actorOf(res))).map(presentInvitation));
  });

  routes.delete("/invitations/:id", {
    summary: "Withdraw an invitation: its link stops working (administrators)",
    params: idParams,
    status: 204,
    returns: "Withdrawn",
    errors: { 403: ADMIN_ONLY, 404: "No such invitation" },
  }, async ({ params: { id } }, req, res) => {
    await invitations.revoke(actorOf(res), id);
    await recordAction(audit, req, res, { action: "invitation.deleted", objectId: id });
    res.status(204).end();
  });

  return routes.router;
}
