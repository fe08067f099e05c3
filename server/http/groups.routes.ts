import { Router } from "express";
import type { GroupsService } from "../groups/groups.service";
import { actorOf } from "./auth.middleware";
import { presentCreatedGroup, presentGroup, presentGroupListing, presentTree } from "./groups.presenters";
import { idParams } from "./common.schemas";
import { createGroupBody, memberParams, setParentBody } from "./groups.schemas";
import { parse } from "./validate";

export function groupsRoutes(groups: GroupsService): Router {
  const router = Router();

  router.post("/user_groups", async (req, res) => {
    const body = parse(createGroupBody, req.body, "body");
    const group = await groups.create(actorOf(res), body.group_name, body.group_permission);
    res.status(201).json(presentCreatedGroup(group));
  });

  router.get("/user_groups", async (_req, res) => {
    res.json((await groups.list(actorOf(res))).map(presentGroupListing));
  });

  // Registered before /user_groups/:id so "tree" is never taken for an id.
  router.get("/user_groups/tree", async (_req, res) => {
    res.json((await groups.tree()).map(presentTree));
  });

  router.put("/user_groups/:id/members/:email", async (req, res) => {
    const { id, email } = parse(memberParams, req.params, "params");
    await groups.addMember(actorOf(res), id, email);
    res.status(204).end();
  });

  router.delete("/user_groups/:id/members/:email", async (req, res) => {
    const { id, email } = parse(memberParams, req.params, "params");
    await groups.removeMember(actorOf(res), id, email);
    res.status(204).end();
  });

  router.put("/user_groups/:id/parent", async (req, res) => {
    const { id } = parse(idParams, req.params, "params");
    const body = parse(setParentBody, req.body, "body");
    res.json(presentGroup(await groups.setParent(actorOf(res), id, body.parent_group_id)));
  });

  router.delete("/user_groups/:id", async (req, res) => {
    const { id } = parse(idParams, req.params, "params");
    await groups.delete(actorOf(res), id);
    res.status(204).end();
  });

  return router;
}
