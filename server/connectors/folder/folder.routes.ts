import type { Router } from "express";
import type { AuditLog } from "../../audit/audit";
import { recordAction } from "../../routing/audit-event";
import { actorOf } from "../../routing/auth.middleware";
import { documentedRouter } from "../../routing/documented-router";
import { groupIdParams } from "../../routing/common.schemas";
import type { InstanceRoles } from "../../access/instance-roles";
import type { FolderSources } from "./folder-sources.service";
import { presentCreatedFolderSource, presentFolderStatus } from "./folder.presenters";
import { createFolderSourceBody } from "./folder.schemas";

export function folderRoutes(folders: FolderSources, roles: InstanceRoles, audit: AuditLog): Router {
  const routes = documentedRouter("Folder sources");

  routes.get("/data_sources/folder", { summary: "Whether folder sources are on, and the folders allowed", returns: "The status and the allowed roots" }, (_input, _req, res) => {
    res.json(presentFolderStatus(folders.roots));
  });

  routes.post("/data_sources/folder/:group_id", {
    summary: "Create a folder source with its auto-provisioned collection and pipeline",
    params: groupIdParams,
    body: createFolderSourceBody,
    status: 201,
    returns: "`{data_source, folder_source, pipeline}`",
    errors: {
      400: "The path is not absolute (or holds NUL), or the folder cannot be used: one `detail` for every such folder (outside the roots, missing, a file, unreadable, a link leading out, inside DATA_DIR or a dot-folder), so the answer tells nothing about what exists",
      403: "On a LAN server or with ADMIN_EMAILS set, only an administrator may (a folder source reads this machine's disks)",
      404: "No such group among the caller's",
      503: "Folder sources are off (FOLDER_SOURCE_ROOTS is not set)",
    },
  }, async ({ params: { group_id }, body: { data_source, folder_source } }, req, res) => {
    await roles.requireInstanceAction(actorOf(res), "create folder sources");
    const created = await folders.create(actorOf(res), group_id, { name: data_source.data_source_name, path: folder_source.path });
    await recordAction(audit, req, res, { action: "source.created", objectId: created.source.id, detail: created.source.kind });
    res.status(201).json(presentCreatedFolderSource(created));
  });

  return routes.router;
}
