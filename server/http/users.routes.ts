import { Router } from "express";
import type { AccountsService } from "../accounts/accounts.service";
import { actorOf } from "./auth.middleware";
import { presentUser } from "./accounts.presenters";
import { presentGroup } from "./groups.presenters";
import { idParams } from "./common.schemas";
import { parse } from "./validate";

export function usersRoutes(accounts: AccountsService): Router {
  const router = Router();

  router.get("/users/me", async (_req, res) => {
    res.json(presentUser(await accounts.requireUser(actorOf(res))));
  });

  router.get("/users", async (_req, res) => {
    res.json((await accounts.listUsers()).map(presentUser));
  });

  router.get("/users/:id/user_groups", async (req, res) => {
    const { id } = parse(idParams, req.params, "params");
    res.json((await accounts.groupsOfUser(actorOf(res), id)).map(presentGroup));
  });

  return router;
}
