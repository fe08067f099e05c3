import type { DataSourceRecord } from "../../data/entities/data-source.entity";
import type { Pipeline } from "../../data/entities/pipeline.entity";
import { presentDataSource } from "../../routing/data-sources.presenters";
import { presentPipeline } from "../../routing/pipelines.presenters";
import { isoNoZone } from "../../time";
import type { DriveFileRecord } from "./drive-file.entity";
import type { DriveGrant } from "./drive-grant.entity";
import type { DriveSourceRecord } from "./drive-source.entity";

/** Connection status; tokens are never part of it. */
export function presentDriveStatus(grant: DriveGrant | null) {
  return {
    connected: grant !== null,
    provider: "google" as const,
    provider_subject: grant?.providerSubject ?? null,
    email: grant?.email ?? null,
    scopes: grant ? grant.scopes.split(" ").filter(Boolean) : [],
    connected_at: isoNoZone(grant?.connectedAt),
  };
}

/** The one place an OAuth token leaves the server (docs/decisions/0003-wire-conventions.md). */
export function presentPickerToken(token: { token: string; expiresAt: Date }) {
  return { access_token: token.token, expires_at: isoNoZone(token.expiresAt) };
}

export function presentDriveFile(file: DriveFileRecord) {
  return { file_id: file.fileId, name: file.name, mime_type: file.mimeType, registered_at: isoNoZone(file.registeredAt) };
}

export function presentDriveSource(drive: DriveSourceRecord, files: DriveFileRecord[]) {
  return { data_source_id: drive.dataSourceId, owner_user_id: drive.ownerUserId, file_count: files.length };
}

/** POST /data_sources/drive: the source, its Drive details (no files yet) and its auto-provisioned pipeline. */
export function presentCreatedDriveSource(created: { source: DataSourceRecord; details: DriveSourceRecord; pipeline: Pipeline }) {
  return { data_source: presentDataSource(created.source), drive_source: presentDriveSource(created.details, []), pipeline: presentPipeline(created.pipeline) };
}

/** POST /data_sources/drive/{id}/files and .../ingest_all: how many files were new, and every file the source now has. */
export function presentRegisteredFiles(registered: { sourceId: string; added: number; files: DriveFileRecord[] }) {
  return { data_source_id: registered.sourceId, added: registered.added, files: registered.files.map(presentDriveFile) };
}
