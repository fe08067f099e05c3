/**
 * The API's types: paths, parameters and request bodies generated from the server's OpenAPI
 * document (generated/api-schema.d.ts, written at build time by scripts/openapi-client.js), with
 * each JSON success answer typed by the server's presenters (server/wire-types.ts). The document
 * describes those answers in words only, so their shapes are laid over it here, per operation and
 * status: a path, method or status the server no longer has fails this file's type check.
 */
import type * as Wire from "../../../server/wire-types";
import type { paths as DocumentPaths } from "../generated/api-schema";

/** GET /health: up, and DATA_DIR's free space (`low`: the server's warning line). */
export interface Health {
  status: "ok";
  disk?: { free_bytes: number; total_bytes: number; low: boolean };
}

/**
 * A share maps to its first-level entry names, or to an error when it cannot be opened
 * (the server's ShareListing lives in its SMB connector, which this type check does not read).
 */
export type ShareListing = Record<string, string[] | { error: string }>;

/** The JSON answer of each operation the UI reads, by status. */
interface Answers {
  "/health": { get: { 200: Health } };
  "/signup": { get: { 200: Wire.SignupStatus }; post: { 201: Wire.Token } };
  "/invitations": { get: { 200: Wire.Invitation[] }; post: { 201: Wire.IssuedInvitation } };
  "/user_groups/{id}/members/{email}": { put: { 202: Wire.IssuedInvitation } };
  "/signin": { post: { 200: Wire.Token } };
  "/signout": { post: { 200: unknown } };
  "/users/me": { get: { 200: Wire.Me } };
  "/users/me/password": { put: { 200: Wire.Token } };
  "/users/me/api_keys": { get: { 200: Wire.ApiKey[] }; post: { 201: Wire.CreatedApiKey } };
  "/audit": { get: { 200: Wire.AuditPage } };
  "/users/me/smb_accounts": { get: { 200: Wire.SmbAccountLink[] }; post: { 201: Wire.SmbAccountLink } };
  "/users": { get: { 200: Wire.User[] } };
  "/instance": { get: { 200: Wire.Instance } };
  "/user_groups": { get: { 200: Wire.GroupListing[] }; post: { 201: Wire.CreatedGroup } };
  "/user_groups/tree": { get: { 200: Wire.GroupTreeNode[] } };
  "/user_groups/{id}/parent": { put: { 200: Wire.Group } };
  "/collections": { get: { 200: Wire.Collection[] }; post: { 201: Wire.Collection } };
  "/collections/{id}/search": { get: { 200: Wire.SearchResults & { documents?: Wire.DocumentResult[] } } };
  "/collections/{id}/embedding": { put: { 200: Wire.CollectionWithJobs } };
  "/collections/{id}/documents": { get: { 200: Wire.DocumentPage } };
  "/data_sources": { get: { 200: Wire.DataSourceListing[] } };
  "/data_sources/{id}/schedules/pause": { post: { 200: Wire.SchedulesChanged } };
  "/data_sources/{id}/schedules/resume": { post: { 200: Wire.SchedulesChanged } };
  "/data_sources/smb/{group_id}": { post: { 201: Wire.CreatedSmbSource } };
  "/data_sources/smb/list/{id}": { get: { 200: { shares: ShareListing } } };
  "/integrations/cloud/drive": { get: { 200: Wire.DriveStatus } };
  "/integrations/cloud/drive/connect": { post: { 200: { auth_url: string } } };
  "/data_sources/drive/picker_token": { get: { 200: Wire.PickerToken } };
  "/data_sources/drive": { post: { 201: Wire.CreatedDriveSource } };
  "/data_sources/drive/{id}/files": { post: { 200: Wire.DriveFilesResult } };
  "/data_sources/drive/{id}/ingest_all": { post: { 200: Wire.DriveFilesResult } };
  "/data_sources/folder": { get: { 200: Wire.FolderStatus } };
  "/data_sources/folder/{group_id}": { post: { 201: Wire.CreatedFolderSource } };
  "/data_pipelines": { get: { 200: Wire.Pipeline[] }; post: { 201: Wire.Pipeline } };
  "/data_pipelines/{id}": { get: { 200: Wire.Pipeline } };
  "/data_pipelines/{id}/schedule": { put: { 200: Wire.Pipeline }; delete: { 200: Wire.Pipeline } };
  "/data_pipelines/{id}/jobs": { get: { 200: Wire.IngestJob[] } };
  "/data_pipelines/{id}/ingest": { post: { 202: Wire.IngestJob } };
  "/data_pipelines/{id}/ingest/cancel": { post: { 202: Wire.IngestJob } };
  /** 202 with a detail: the pipeline never ran. */
  "/data_pipelines/{id}/ingest/status": { get: { 200: Wire.IngestJob; 202: { detail: string } } };
  "/models/library/search": { get: { 200: Wire.LibraryModel[] | { results: Wire.LibraryModel[] } } };
  "/models/server": { get: { 200: Wire.ModelServerStatus } };
  "/models": { get: { 200: Wire.CatalogModel[] } };
  "/models/cancel": { post: { 200: Wire.CancelledPull } };
  "/models/my": { get: { 200: Wire.PersonalModel[] }; post: { 201: Wire.PersonalModel }; put: { 200: Wire.PersonalModel } };
  "/collections/{id}/conversations": { get: { 200: Wire.Conversation[] } };
  "/conversations/{id}": { get: { 200: Wire.ConversationWithTurns } };
}

type JsonAnswer<T> = { headers: { [name: string]: unknown }; content: { "application/json": T } };

type WithAnswers<Operation, ByStatus> = Operation extends { responses: infer Responses }
  ? Omit<Operation, "responses"> & { responses: { [S in keyof Responses]: S extends keyof ByStatus ? JsonAnswer<ByStatus[S]> : Responses[S] } }
  : Operation;

/** The document's paths with the presenters' answers in place of its untyped JSON bodies. */
export type paths = {
  [P in keyof DocumentPaths]: P extends keyof Answers
    ? { [M in keyof DocumentPaths[P]]: M extends keyof Answers[P] ? WithAnswers<DocumentPaths[P][M], Answers[P][M]> : DocumentPaths[P][M] }
    : DocumentPaths[P];
};

// Every answer above must be one the document has: a renamed path, a removed method or a changed status stops the build here.
type ResponsesOf<P, M> = P extends keyof DocumentPaths ? (M extends keyof DocumentPaths[P] ? (DocumentPaths[P][M] extends { responses: infer R } ? R : never) : never) : never;
type NotInTheDocument = {
  [P in keyof Answers]: P extends keyof DocumentPaths
    ? { [M in keyof Answers[P]]: M extends keyof DocumentPaths[P] ? Exclude<keyof Answers[P][M], keyof ResponsesOf<P, M>> : M }[keyof Answers[P]]
    : P;
}[keyof Answers];
export const answersMatchTheDocument: [NotInTheDocument] extends [never] ? true : { notInTheDocument: NotInTheDocument } = true;
