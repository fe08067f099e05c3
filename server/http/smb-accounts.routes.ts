import type { RequestHandler, Router } from "express";
import type { SmbAccountLinks } from "../connectors/smb/smb-account-links.service";
import { TOO_MANY_CONNECTS } from "../connectors/smb/smb-connect-limiter";
import { actorOf } from "../routing/auth.middleware";
import { idParams } from "../routing/common.schemas";
import { documentedRouter } from "../routing/documented-router";
import { presentSmbAccountLink } from "./smb-accounts.presenters";
import { linkSmbAccountBody } from "./smb-accounts.schemas";

/**
 * The caller's Windows accounts, one per file server: whose permissions apply to them (issue 33).
 * A link logs in to the server as the person, so it counts with the SMB source routes'
 * connections (`connectAttempts`, decision 0486): one person cannot keep the check threads busy.
 */
export function smbAccountsRoutes(links: SmbAccountLinks, connectAttempts: RequestHandler): Router {
  const routes = documentedRouter("Windows accounts");

  routes.post("/users/me/smb_accounts", {
    summary: "Link the caller's Windows account on the server of an SMB source: one NTLMv2 login as it, then its SID and groups over IPC$ (LSA, SAMR), off the API's thread and within `SMB_CHECK_DEADLINE_S`; the password is used for that login only",
    body: linkSmbAccountBody,
    status: 201,
    returns: "`{id, data_source_id, server, account, sid, group_sids, groups: [{sid, name}], checked_at}`; a link applies to every source on the same server, and linking again on that server replaces it",
    errors: {
      400: "The server refused the user name or password (the SMB status in `detail`; nothing stored), the source is not an SMB share, or its address is outside `SMB_ALLOWED_NETWORKS`",
      404: "No such data source among the caller's",
      409: "That Windows account is linked by another Sluice user",
      429: `Five refused sign-ins as that Windows account (on that server) in 15 minutes (a wrong password counts; a server that cannot be reached or does not answer in time does not); \`Retry-After\` says when to try again. Or: ${TOO_MANY_CONNECTS}`,
      503: "The file server did not answer in time (a step's timeout, or `SMB_CHECK_DEADLINE_S` for the whole link: the detail says to try again or ask IT), `SMB server unreachable` for any other server that cannot be reached or breaks SMB's rules, or 8 SMB checks are under way already (`Retry-After`); nothing stored",
    },
  }, connectAttempts, async ({ body }, _req, res) => {
    const link = await links.link(actorOf(res), { dataSourceId: body.data_source_id, username: body.username, password: body.password });
    res.status(201).json(presentSmbAccountLink(link));
  });

  routes.get("/users/me/smb_accounts", {
    summary: "The caller's linked Windows accounts",
    returns: "A list of links, by server",
  }, async (_input, _req, res) => {
    res.json((await links.list(actorOf(res))).map(presentSmbAccountLink));
  });

  routes.delete("/users/me/smb_accounts/:id", {
    summary: "Unlink one of the caller's Windows accounts: on that server they then see only the files everyone may read",
    params: idParams,
    status: 204,
    returns: "Unlinked",
    errors: { 404: "No such link among the caller's" },
  }, async ({ params: { id } }, _req, res) => {
    await links.unlink(actorOf(res), id);
    res.status(204).end();
  });

  return routes.router;
}
