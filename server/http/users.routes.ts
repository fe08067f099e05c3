import type { Router } from "express";
import type { AccountsService } from "../accounts/accounts.service";
import { actorOf } from "../routing/auth.middleware";
import { documentedRouter } from "../routing/documented-router";
import { presentMe, presentUser } from "./accounts.presenters";
import { presentGroup } from "./groups.presenters";
import { idParams } from "../routing/common.schemas";

export function usersRoutes(accounts: AccountsService): Router {
  const routes = documentedRouter("Users");

  routes.get("/users/me", { summary: "The caller", returns: "The user, with `is_admin`: whether they administer this instance" }, async (_input, _req, res) => {
    const { user, isAdmin } = await accounts.profile(actorOf(res));
    res.json(presentMe(user, isAdmin));
  });

  routes.get("/users", { summary: "Every user", returns: "A list of users" }, async (_input, _req, res) => {
    res.json((await accounts.listUsers()).map(presentUser));
  });

  routes.get("/users/:id/user_groups", {
    summary: "A user's groups, as far as the caller may see them",
    params: idParams,
    returns: "A list of groups",
    errors: { 404: "No such user" },
  }, async ({ params: { id } }, _req, res) => {
    res.json((await accounts.groupsOfUser(actorOf(res), id)).map(presentGroup));
  });

  return routes.router;
}
