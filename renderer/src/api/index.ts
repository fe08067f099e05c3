/**
 * The UI's one door to the server: the generated client (client.ts), the cached reads
 * (queries.ts), the two event streams, and the names the screens use for the server's JSON.
 */
import type * as Wire from "../../../server/wire-types";
import { ApiError, api, readEvents } from "./client";

export { ApiError, api as client, answer, errorMessage, fieldLabel, setUnauthorizedHandler, type FieldError } from "./client";
export { invalidate, invalidateSourceLists, keys, queries, queryClient } from "./queries";
export type { Health, ShareListing } from "./schema";

export type User = Wire.User;
export type Me = Wire.Me;
export type Invitation = Wire.Invitation;
export type IssuedInvitation = Wire.IssuedInvitation;
export type SignupStatus = Wire.SignupStatus;
export type ApiKey = Wire.ApiKey;
export type CreatedApiKey = Wire.CreatedApiKey;
export type AuditEvent = Wire.AuditEvent;
/** A linked Windows account: whose file-server permissions apply on its server. */
export type SmbAccountLink = Wire.SmbAccountLink;
export type GroupPermission = Wire.CreateGroupBody["group_permission"];
/** A group as GET /user_groups lists it (member emails only for the caller's own groups). */
export type Group = Wire.GroupListing;
export type GroupTreeNode = Wire.GroupTreeNode;
export type DataSource = Wire.DataSourceListing;
export type CreatedSmbSource = Wire.CreatedSmbSource;
export type CreatedFolderSource = Wire.CreatedFolderSource;
export type CreatedDriveSource = Wire.CreatedDriveSource;
export type Pipeline = Wire.Pipeline;
export type PipelineSchedule = Wire.PipelineScheduleRecord;
export type Collection = Wire.Collection;
export type DocumentResult = Wire.DocumentResult;
export type DocumentLocation = Wire.DocumentLocation;
/** keyword, semantic or hybrid; without it the server picks (hybrid when the collection has an embedding model). */
export type SearchMode = Wire.SearchMode;
export type IngestJob = Wire.IngestJob;
export type CatalogModel = Wire.CatalogModel;
export type LibraryModel = Wire.LibraryModel;
export type PersonalModel = Wire.PersonalModel;
/** One `data:` event of the POST /models stream. */
export type PullEvent = Wire.PullEvent;
export type ModelServerStatus = Wire.ModelServerStatus;
export type DriveStatus = Wire.DriveStatus;
export type DriveFilesResult = Wire.DriveFilesResult;
export type AskEvent = Wire.AskEvent;
export type AskSource = Wire.AskSource;

/**
 * POST /models answers a text/event-stream, read to its end. Resolves with the completed record,
 * or null if the stream ended without one (the caller may pull again; partial downloads resume).
 */
export async function pullModel(model_name: string, onEvent: (event: PullEvent) => void, update = false): Promise<CatalogModel | null> {
  const { response } = await api.POST("/models", { body: { model_name, update }, parseAs: "stream" });
  let completed: CatalogModel | null = null;
  await readEvents<PullEvent>(response, (event) => {
    if (event.status === "completed" && event.model) completed = event.model;
    onEvent(event);
  });
  return completed;
}

/** POST /collections/{id}/ask: an event stream read like a pull's. */
export async function askCollection(collectionId: string, body: Wire.AskBody, onEvent: (event: AskEvent) => void, signal?: AbortSignal): Promise<void> {
  const { response } = await api.POST("/collections/{id}/ask", { params: { path: { id: collectionId } }, body, parseAs: "stream", signal });
  await readEvents<AskEvent>(response, onEvent);
}

export function isApiError(error: unknown, status?: number): error is ApiError {
  return error instanceof ApiError && (status === undefined || error.status === status);
}
