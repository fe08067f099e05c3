import type { Router } from "express";
import type { GroupsService } from "../groups/groups.service";
import { actorOf } from "../routing/auth.middleware";
import { documentedRouter } from "../routing/documented-router";
import { presentCreatedGroup, presentGroup, presentGroupListing, presentTree } from "./groups.presenters";
import { idParams } from "../routing/common.schemas";
import { createGroupBody, memberParams, setParentBody } from "./groups.schemas";
import type { InvitationsService } from "../accounts/invitations.service";
import type { AuditLog } from "../audit/audit";
import { recordAction } from "../routing/audit-event";
import { presentIssuedInvitation } from "./invitations.presenters";

export function groupsRoutes(groups: GroupsService, invitations: InvitationsService, audit: AuditLog): Router {
  const routes = documentedRouter("Groups");

  routes.post("/user_groups", {
    summary: "Create a group; the caller becomes its first member",
    body: createGroupBody,
    status: 201,
    returns: "`{created_group_id}`",
    errors: { 409: "A group of that name exists" },
  }, async ({ body }, req, res) => {
    const group = await groups.create(actorOf(res), body.group_name, body.group_permission);
    await recordAction(audit, req, res, { action: "group.created", objectId: group.id });
    res.status(201).json(presentCreatedGroup(group));
  });

  routes.get("/user_groups", { summary: "Every group", returns: "The groups; member emails only of the caller's own" }, async (_input, _req, res) => {
    res.json((await groups.list(actorOf(res))).map(presentGroupListing));
  });

  // Registered before /user_groups/:id so "tree" is never taken for an id.
  routes.get("/user_groups/tree", { summary: "The whole group tree", returns: "The root groups, each with its children" }, async (_input, _req, res) => {
    res.json((await groups.tree()).map(presentTree));
  });

  routes.put("/user_groups/:id/members/:email", {
    summary: "Add a member (idempotent); an address without an account gets an invitation into the group instead",
    params: memberParams,
    status: 204,
    returns: "Added, or already a member",
    // Listed with the errors, as ingest/status's 202: a different answer from the success one.
    errors: {
      202: "No account has that address: the answer is an invitation into the group, with its `link` (shown this once); the account made with it joins the group",
      403: "The address has no account, and under SIGNUP=invite only an administrator can invite it",
      404: "No such group among the caller's",
      409: "The address has no account and sign-up is off (SIGNUP=off)",
      422: "Not an email address (when no account has it)",
    },
  }, async ({ params: { id, email } }, req, res) => {
    const actor = actorOf(res);
    const member = await groups.addMember(actor, id, email);
    if (member !== "no-account") {
      // Adding someone who is a member already changes nothing, so it records nothing.
      if (member.added) await recordAction(audit, req, res, { action: "group.member_added", objectId: id, detail: member.email });
      return void res.status(204).end();
    }
    // No account: what happened is an invitation (into the group), not a membership.
    const { invitation, link } = await invitations.inviteToGroup(actor, id, email);
    await recordAction(audit, req, res, { action: "invitation.created", objectId: invitation.id, detail: `${invitation.email} (into group ${id})` });
    res.status(202).json(presentIssuedInvitation(invitation, link));
  });

  routes.delete("/user_groups/:id/members/:email", {
    summary: "Remove a member",
    params: memberParams,
    status: 204,
    returns: "Removed",
    errors: { 404: "No such group among the caller's, no such user, or not a member", 409: "The last member cannot be removed; delete the group instead" },
  }, async ({ params: { id, email } }, req, res) => {
    const removed = await groups.removeMember(actorOf(res), id, email);
    await recordAction(audit, req, res, { action: "group.member_removed", objectId: id, detail: removed });
    res.status(204).end();
  });

  routes.put("/user_groups/:id/parent", {
    summary: "Set or clear the parent group",
    params: idParams,
    body: setParentBody,
    returns: "The group",
    errors: { 400: "The parent does not exist, or it would make a cycle", 404: "No such group among the caller's" },
  }, async ({ params: { id }, body }, req, res) => {
    const group = await groups.setParent(actorOf(res), id, body.parent_group_id);
    await recordAction(audit, req, res, { action: "group.parent_set", objectId: group.id, detail: `parent ${group.parentGroupId ?? "none"}` });
    res.json(presentGroup(group));
  });

  routes.delete("/user_groups/:id", {
    summary: "Delete a group; its child groups become roots",
    params: idParams,
    status: 204,
    returns: "Deleted",
    errors: { 404: "No such group among the caller's", 409: "The group still owns data sources or collections (named in `detail`)" },
  }, async ({ params: { id } }, req, res) => {
    await groups.delete(actorOf(res), id);
    await recordAction(audit, req, res, { action: "group.deleted", objectId: id });
    res.status(204).end();
  });

  return routes.router;
}
