import type { RequestHandler, Router } from "express";
import type { AuditLog } from "../../audit/audit";
import { recordAction } from "../../routing/audit-event";
import { actorOf } from "../../routing/auth.middleware";
import { documentedRouter } from "../../routing/documented-router";
import { groupIdParams, idParams } from "../../routing/common.schemas";
import type { SmbSources } from "./smb-sources.service";
import { presentCreatedSmbSource } from "./smb.presenters";
import { createSmbSourceBody } from "./smb.schemas";
import { TOO_MANY_CONNECTS } from "./smb-connect-limiter";

/** `connectAttempts`: the instance's one count of SMB connection attempts (smbConnectAttempts), shared with the account link route. */
export function smbRoutes(smb: SmbSources, connectAttempts: RequestHandler, audit: AuditLog): Router {
  const routes = documentedRouter("SMB sources");

  routes.post("/data_sources/smb/:group_id", {
    summary: "Create an SMB source after connecting to the share, with its auto-provisioned collection and pipeline",
    params: groupIdParams,
    body: createSmbSourceBody,
    status: 201,
    returns: "`{data_source, smb_source, pipeline}`",
    errors: {
      400: "`Invalid SMB credentials`: the server refused them or could not be reached, with `reason` (`logon_failure`, `host_not_found`, `connection_refused`, `timed_out`, `protocol_error`, `share_not_found`, `access_denied`, `signing_required`, `encryption_required`, `bad_signature`) and a `hint` naming what to fix; a silent server fails within 5 s. Or its destination may not be dialled: an address outside `SMB_ALLOWED_NETWORKS` (on a LAN server without it, loopback, link-local, 0.0.0.0/8 or multicast) or a port outside `SMB_ALLOWED_PORTS` (445 and 139 on a LAN server); one answer whatever listens there. A check gives up after `SMB_CHECK_DEADLINE_S` (25 s). Nothing was created",
      404: "No such group among the caller's",
      429: TOO_MANY_CONNECTS,
      503: "8 SMB checks are under way already (`Retry-After` says when to try again); nothing was created",
    },
  }, connectAttempts, async ({ params: { group_id }, body: { data_source, smb_source } }, req, res) => {
    const created = await smb.create(actorOf(res), group_id, {
      name: data_source.data_source_name,
      password: smb_source.remote_smb_password,
      remoteSystemUsername: smb_source.remote_system_username,
      remoteSystemName: smb_source.remote_system_name,
      localSystemName: smb_source.local_system_name,
      defaultIp: smb_source.default_ip ?? null,
      port: smb_source.port,
      sourcePermissions: smb_source.source_permissions,
    });
    await recordAction(audit, req, res, { action: "source.created", objectId: created.source.id, detail: created.source.kind });
    res.status(201).json(presentCreatedSmbSource(created));
  });

  routes.get("/data_sources/smb/list/:id", {
    summary: "The shares of the source's server, each with its first-level entries",
    params: idParams,
    returns: "`{shares: {<share>: [<entry names>] or {error, reason?, hint?}}}` (`reason`: `share_not_found` or `access_denied`)",
    errors: {
      400: "Not an SMB source, the server refused the stored credentials, or its destination may not be dialled (`SMB_ALLOWED_NETWORKS`, `SMB_ALLOWED_PORTS`)",
      404: "No such data source among the caller's",
      429: TOO_MANY_CONNECTS,
      503: "`SMB server unreachable`: a closed port, a silent server, a name that does not resolve and a server that breaks SMB's rules or Sluice's bounds all answer the same; a listing gives up after `SMB_CHECK_DEADLINE_S` (25 s). Or 8 SMB checks are under way already (`Retry-After`)",
    },
  }, connectAttempts, async ({ params: { id } }, _req, res) => {
    res.json({ shares: await smb.shareListing(actorOf(res), id) });
  });

  return routes.router;
}
