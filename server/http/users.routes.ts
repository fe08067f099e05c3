import type { Router } from "express";
import type { AccountsService } from "../accounts/accounts.service";
import { actorOf, clearTokenCookie, clientAddress } from "../routing/auth.middleware";
import { documentedRouter } from "../routing/documented-router";
import type { CookieSecurity } from "../routing/transport-security";
import { presentMe, presentUser } from "./accounts.presenters";
import { presentGroup } from "./groups.presenters";
import { idParams } from "../routing/common.schemas";

export function usersRoutes(accounts: AccountsService, secureCookies: CookieSecurity): Router {
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

  const deletion = {
    status: 204,
    returns: "Deleted: the account's memberships, conversations, personal models, Drive grant and API keys go; its groups stay with their other members",
    errors: {
      403: "The caller used an API key to delete their own account",
      409: "The account is the only member of a group that owns sources or collections, or its Drive grant reads Drive sources (named in `detail`)",
    },
  };

  routes.delete("/users/me", { summary: "Delete the caller's account", ...deletion }, async (_input, req, res) => {
    const actor = actorOf(res);
    await accounts.deleteAccount(actor, actor.userId, clientAddress(req));
    clearTokenCookie(res, secureCookies);
    res.status(204).end();
  });

  routes.delete("/users/:id", {
    summary: "Delete an account: the caller's own, or any as an administrator",
    params: idParams,
    ...deletion,
    errors: { ...deletion.errors, 404: "No such user, or the caller is neither that user nor an administrator" },
  }, async ({ params: { id } }, req, res) => {
    const actor = actorOf(res);
    await accounts.deleteAccount(actor, id, clientAddress(req));
    if (id === actor.userId) clearTokenCookie(res, secureCookies);
    res.status(204).end();
  });

  return routes.router;
}
