/**
 * The Sluice HTTP API, one function per endpoint. Auth rides on the HttpOnly
 * `access_token` cookie the server sets at sign-up/sign-in, so no token is
 * ever handled here.
 */
import type * as Wire from "../../server/wire-types";

export interface FieldError {
  field: string;
  message: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly errors: FieldError[] = [],
    /** A machine-readable cause beside the detail (SMB checks: `logon_failure`, `timed_out`, ...), and what to do about it. */
    readonly reason: string | null = null,
    readonly hint: string | null = null,
  ) {
    super(detail);
    this.name = "ApiError";
  }
}

/** What a person calls a request field: "group_name" is "Group name", "smb_source.port" is "Port". */
export function fieldLabel(field: string): string {
  const last = field.split(".").filter((part) => !/^\d+$/.test(part)).pop() ?? field;
  const words = last.replace(/_/g, " ").trim();
  return words ? words[0].toUpperCase() + words.slice(1) : "This field";
}

/**
 * Errors for display, one sentence per problem: a 422's field errors as "Email must be a valid
 * email address." (its detail repeats them in API words), else the server's detail, or a plain
 * sentence for network failures.
 */
export function errorMessage(error: unknown): string {
  if (error instanceof ApiError) {
    if (error.errors.length) return error.errors.map((e) => `${fieldLabel(e.field)} ${e.message.replace(/\.$/, "")}.`).join(" ");
    return error.detail;
  }
  if (error instanceof Error) return error.message;
  return String(error);
}

/** Called on any 401 so the app can fall back to the sign-in screen. */
let onUnauthorized: (() => void) | null = null;
export function setUnauthorizedHandler(handler: (() => void) | null): void {
  onUnauthorized = handler;
}

async function toApiError(res: Response): Promise<ApiError> {
  let detail = `Request failed (${res.status} ${res.statusText})`;
  let errors: FieldError[] = [];
  let reason: string | null = null;
  let hint: string | null = null;
  try {
    const body = (await res.json()) as { detail?: unknown; errors?: unknown; reason?: unknown; hint?: unknown };
    if (typeof body.detail === "string") detail = body.detail;
    if (Array.isArray(body.errors)) errors = body.errors as FieldError[];
    if (typeof body.reason === "string") reason = body.reason;
    if (typeof body.hint === "string") hint = body.hint;
  } catch {
    // Not JSON: keep the generic sentence.
  }
  return new ApiError(res.status, detail, errors, reason, hint);
}

async function send(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(`/api${path}`, {
      method,
      credentials: "same-origin",
      headers: body === undefined ? { Accept: "application/json" } : { Accept: "application/json", "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
    });
  } catch (error) {
    if ((error as Error).name === "AbortError") throw error;
    throw new ApiError(0, "Cannot reach the Sluice server");
  }
  if (!res.ok) {
    const error = await toApiError(res);
    const isAuthCall = path === "/signin" || path === "/signup";
    // A dead Google Drive grant answers 401 on picker_token: the session itself is fine.
    const isDeadDriveGrant = path === PICKER_TOKEN_PATH && /drive/i.test(error.detail);
    if (res.status === 401 && !isAuthCall && !isDeadDriveGrant) onUnauthorized?.();
    throw error;
  }
  return res;
}

async function json<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
  const res = await send(method, path, body, signal);
  if (res.status === 204) return undefined as T;
  return (await res.json()) as T;
}

const enc = encodeURIComponent;
const PICKER_TOKEN_PATH = "/data_sources/drive/picker_token";

// ---- Types: the server's JSON shapes, derived from its presenters and request schemas ----

export type User = Wire.User;
export type GroupPermission = Wire.CreateGroupBody["group_permission"];
/** A group as GET /user_groups lists it (member emails only for the caller's own groups). */
export type Group = Wire.GroupListing;
export type GroupTreeNode = Wire.GroupTreeNode;
export type SmbSource = Wire.SmbSource;
export type DataSource = Wire.DataSourceListing;
export type FolderSource = Wire.FolderSource;
/** Whether this machine allows folder sources, and the folders (FOLDER_SOURCE_ROOTS) a source must be inside. */
export type FolderStatus = Wire.FolderStatus;
export type CreatedFolderSource = Wire.CreatedFolderSource;
export type Pipeline = Wire.Pipeline;
/** The SMB form's fields: the request body's two parts, flattened. */
export type NewSmbSource = Wire.CreateSmbSourceBody["data_source"] & Wire.CreateSmbSourceBody["smb_source"];
export type CreatedSmbSource = Wire.CreatedSmbSource;
/**
 * A share maps to its first-level entry names, or to an error when it cannot be opened
 * (the server's ShareListing lives in its SMB connector, which this type check does not read).
 */
export type ShareListing = Record<string, string[] | { error: string }>;
export type Collection = Wire.Collection;
/** `snippet` is server-escaped text with matches wrapped in <mark>. */
export type SearchHit = Wire.SearchHit;
export type DocumentResult = Wire.DocumentResult;
export type DocumentLocation = Wire.DocumentLocation;
export type DocumentSummary = Wire.DocumentSummary;
export type DocumentPage = Wire.DocumentPage;
export type IngestJob = Wire.IngestJob;
export type CatalogModel = Wire.CatalogModel;
export type LibraryModel = Wire.LibraryModel;
export type PersonalModel = Wire.PersonalModel;
/** One `data:` event of the POST /models stream. */
export type PullEvent = Wire.PullEvent;
export type ModelServerStatus = Wire.ModelServerStatus;
export type DriveStatus = Wire.DriveStatus;
export type DriveFile = Wire.DriveFile;
export type DriveSource = Wire.DriveSource;
export type CreatedDriveSource = Wire.CreatedDriveSource;
export type DriveFilesResult = Wire.DriveFilesResult;
export type PickerToken = Wire.PickerToken;

// ---- Accounts ----

export const signUp = (email: string, password: string) => json<Wire.Token>("POST", "/signup", { email, password } satisfies Wire.SignUpBody);
export const signIn = (email: string, password: string) => json<Wire.Token>("POST", "/signin", { email, password } satisfies Wire.SignInBody);
export const signOut = () => json<unknown>("POST", "/signout");
export const me = () => json<User>("GET", "/users/me");
export const listUsers = () => json<User[]>("GET", "/users");
/** Whether the viewer may change this instance's settings (the desktop user at its own machine). */
export const instance = () => json<Wire.Instance>("GET", "/instance");

// ---- Groups ----

export const listGroups = () => json<Group[]>("GET", "/user_groups");
export const groupTree = () => json<GroupTreeNode[]>("GET", "/user_groups/tree");
export const createGroup = (group_name: string, group_permission: GroupPermission) =>
  json<Wire.CreatedGroup>("POST", "/user_groups", { group_name, group_permission } satisfies Wire.CreateGroupBody);
export const addMember = (groupId: string, email: string) => json<void>("PUT", `/user_groups/${enc(groupId)}/members/${enc(email)}`);
export const removeMember = (groupId: string, email: string) => json<void>("DELETE", `/user_groups/${enc(groupId)}/members/${enc(email)}`);
export const setParent = (groupId: string, parent_group_id: string | null) =>
  json<Wire.Group>("PUT", `/user_groups/${enc(groupId)}/parent`, { parent_group_id } satisfies Wire.SetParentBody);
export const deleteGroup = (groupId: string) => json<void>("DELETE", `/user_groups/${enc(groupId)}`);

// ---- Data sources ----

export const listDataSources = () => json<DataSource[]>("GET", "/data_sources");
export const createSmbSource = (groupId: string, s: NewSmbSource) =>
  json<CreatedSmbSource>("POST", `/data_sources/smb/${enc(groupId)}`, {
    data_source: { data_source_name: s.data_source_name },
    smb_source: {
      remote_system_username: s.remote_system_username,
      remote_smb_password: s.remote_smb_password,
      remote_system_name: s.remote_system_name,
      local_system_name: s.local_system_name,
      default_ip: s.default_ip,
      port: s.port,
    },
  } satisfies Wire.CreateSmbSourceBody);
export const listSmbShares = (sourceId: string) => json<{ shares: ShareListing }>("GET", `/data_sources/smb/list/${enc(sourceId)}`);
export const folderStatus = () => json<FolderStatus>("GET", "/data_sources/folder");
export const createFolderSource = (groupId: string, data_source_name: string, path: string) =>
  json<CreatedFolderSource>("POST", `/data_sources/folder/${enc(groupId)}`, { data_source: { data_source_name }, folder_source: { path } } satisfies Wire.CreateFolderSourceBody);
export const deleteDataSource = (sourceId: string) => json<void>("DELETE", `/data_sources/${enc(sourceId)}`);

// ---- Google Drive ----

export const driveStatus = () => json<DriveStatus>("GET", "/integrations/cloud/drive");
/** A consent URL; after consent Google's redirect lands back on `returnTo` (a path on this origin). */
export const connectDrive = (returnTo: string) => json<{ auth_url: string }>("POST", `/integrations/cloud/drive/connect?return_to=${enc(returnTo)}`);
export const disconnectDrive = () => json<void>("DELETE", "/integrations/cloud/drive");
export const drivePickerToken = () => json<PickerToken>("GET", PICKER_TOKEN_PATH);
export const createDriveSource = (data_source_name: string, owner_group_id: string) =>
  json<CreatedDriveSource>("POST", "/data_sources/drive/", { data_source: { data_source_name, owner_group_id } } satisfies Wire.CreateDriveSourceBody);
export const addDriveFiles = (sourceId: string, file_ids: string[]) => json<DriveFilesResult>("POST", `/data_sources/drive/${enc(sourceId)}/files`, { file_ids } satisfies Wire.RegisterDriveFilesBody);
export const ingestAllDrive = (sourceId: string) => json<DriveFilesResult>("POST", `/data_sources/drive/${enc(sourceId)}/ingest_all`);

// ---- Collections ----

export const listCollections = () => json<Collection[]>("GET", "/collections");
export const createCollection = (name: string, owner_group_id: string) => json<Collection>("POST", "/collections", { name, owner_group_id } satisfies Wire.CreateCollectionBody);
export const deleteCollection = (id: string) => json<void>("DELETE", `/collections/${enc(id)}`);
export const searchCollection = (id: string, q: string, topK = 10, signal?: AbortSignal, mode?: SearchMode) =>
  json<Wire.SearchResults>("GET", `/collections/${enc(id)}/search?q=${enc(q)}&top_k=${topK}${mode ? `&mode=${mode}` : ""}`, undefined, signal);
/** keyword, semantic or hybrid; without it the server picks (hybrid when the collection has an embedding model). */
export type SearchMode = Wire.SearchMode;
/** Sets (a catalog model that can embed) or clears (null) the collection's embedding model; 400 with a detail for a model that cannot embed. */
export const setEmbeddingModel = (id: string, model: string | null) =>
  json<Wire.CollectionWithJobs>("PUT", `/collections/${enc(id)}/embedding`, { model } satisfies Wire.SetEmbeddingBody);

export interface DocumentSearchOptions {
  /** File extensions, e.g. ["pdf", "docx"]. */
  types?: string[];
  /** A folder of the source paths, e.g. "share/reports". */
  folder?: string;
  /** keyword, semantic or hybrid (see SearchMode); default: the server's. */
  mode?: SearchMode;
}

/** Search answering one entry per document (`documents`, each with its best passages) and `matched: "any"` when not every word was found. */
export const searchDocuments = (id: string, q: string, topK = 10, options: DocumentSearchOptions = {}, signal?: AbortSignal) => {
  const params = new URLSearchParams({ q, top_k: String(topK), group_by: "document" });
  if (options.types?.length) params.set("type", options.types.join(","));
  if (options.folder) params.set("folder", options.folder);
  if (options.mode) params.set("mode", options.mode);
  return json<Wire.SearchResults & { documents: Wire.DocumentResult[] }>("GET", `/collections/${enc(id)}/search?${params}`, undefined, signal);
};
export const listDocuments = (id: string, offset = 0, limit = 50) =>
  json<DocumentPage>("GET", `/collections/${enc(id)}/documents?offset=${offset}&limit=${limit}`);

// ---- Pipelines and ingestion ----

export const listPipelines = () => json<Pipeline[]>("GET", "/data_pipelines");
export const getPipeline = (id: string) => json<Pipeline>("GET", `/data_pipelines/${enc(id)}`);
export const createPipeline = (p: Wire.CreatePipelineBody) =>
  json<Pipeline>("POST", "/data_pipelines", p);
export const triggerIngest = (id: string) => json<IngestJob>("POST", `/data_pipelines/${enc(id)}/ingest`);
export const cancelIngest = (id: string) => json<IngestJob>("POST", `/data_pipelines/${enc(id)}/ingest/cancel`);
export const listJobs = (id: string) => json<IngestJob[]>("GET", `/data_pipelines/${enc(id)}/jobs`);
export type PipelineSchedule = Wire.PipelineScheduleRecord;
/** Sets or replaces the schedule, or pauses/resumes it (`{paused}` alone); answers the pipeline. */
export const setSchedule = (id: string, body: Wire.SetScheduleBody) => json<Pipeline>("PUT", `/data_pipelines/${enc(id)}/schedule`, body);
export const removeSchedule = (id: string) => json<Pipeline>("DELETE", `/data_pipelines/${enc(id)}/schedule`);
/** Pauses or resumes the schedules of every pipeline reading from a data source. */
export const setSourceSchedulesPaused = (dataSourceId: string, paused: boolean) =>
  json<Wire.SchedulesChanged>("POST", `/data_sources/${enc(dataSourceId)}/schedules/${paused ? "pause" : "resume"}`);

/** GET /health: up, and DATA_DIR's free space (`low`: the server's warning line, README: When things go wrong). */
export interface Health {
  status: "ok";
  disk?: { free_bytes: number; total_bytes: number; low: boolean };
}
export const health = () => json<Health>("GET", "/health");

/** The latest job, or null when the pipeline never ran (the server answers 202 with a detail, not a job). */
export async function ingestStatus(id: string): Promise<IngestJob | null> {
  const res = await send("GET", `/data_pipelines/${enc(id)}/ingest/status`);
  if (res.status === 202) return null;
  return (await res.json()) as IngestJob;
}

// ---- Models ----

export const searchLibrary = (q: string, topK = 10, signal?: AbortSignal) =>
  json<LibraryModel[] | { results: LibraryModel[] }>("GET", `/models/library/search?q=${enc(q)}&top_k=${topK}`, undefined, signal).then(
    (body) => (Array.isArray(body) ? body : (body.results ?? [])),
  );
export const listModels = () => json<CatalogModel[]>("GET", "/models");
export const deleteModel = (id: string) => json<void>("DELETE", `/models/${enc(id)}`);
export const listMyModels = () => json<PersonalModel[]>("GET", "/models/my");
export const addMyModel = (model_name: string, hardware_notes: string) => json<PersonalModel>("POST", "/models/my", { model_name, hardware_notes } satisfies Wire.AddPersonalModelBody);
export const updateMyModel = (model_name: string, hardware_notes: string) => json<PersonalModel>("PUT", "/models/my", { model_name, hardware_notes } satisfies Wire.UpdatePersonalModelBody);
export const deleteMyModel = (recordId: string) => json<void>("DELETE", `/models/my/${enc(recordId)}`);
export const modelServerStatus = () => json<ModelServerStatus>("GET", "/models/server");
export const cancelPull = (model_name: string) => json<Wire.CancelledPull>("POST", "/models/cancel", { model_name } satisfies Wire.CancelPullBody);

/**
 * POST /models answers a text/event-stream; EventSource cannot POST, so the
 * body is read with a stream reader and split into `data:` lines. Resolves
 * with the completed record, or null if the stream ended without one (the
 * caller may pull again; partial downloads resume).
 */
export async function pullModel(model_name: string, onEvent: (event: PullEvent) => void, update = false): Promise<CatalogModel | null> {
  const res = await send("POST", "/models", { model_name, update } satisfies Wire.PullModelBody);
  let completed: CatalogModel | null = null;
  await readEvents<PullEvent>(res, (event) => {
    if (event.status === "completed" && event.model) completed = event.model;
    onEvent(event);
  });
  return completed;
}

/** Reads a text/event-stream body to its end, handing each `data:` event (JSON) to onEvent. */
async function readEvents<T>(res: Response, onEvent: (event: T) => void): Promise<void> {
  if (!res.body) throw new ApiError(res.status, "The server sent no event stream");
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  const handleEvent = (block: string) => {
    const data = block
      .split(/\r?\n/)
      .filter((line) => line.startsWith("data:"))
      .map((line) => line.slice(5).replace(/^ /, ""))
      .join("\n");
    if (!data) return;
    let event: T;
    try {
      event = JSON.parse(data) as T;
    } catch {
      return;
    }
    onEvent(event);
  };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    // Events end with a blank line.
    for (let boundary = /\r?\n\r?\n/.exec(buffer); boundary; boundary = /\r?\n\r?\n/.exec(buffer)) {
      handleEvent(buffer.slice(0, boundary.index));
      buffer = buffer.slice(boundary.index + boundary[0].length);
    }
  }
  if (buffer.trim()) handleEvent(buffer);
}

// ---- ask a collection ----

export type AskEvent = Wire.AskEvent;
export type AskSource = Wire.AskSource;
export type Conversation = Wire.Conversation;
export type ConversationWithTurns = Wire.ConversationWithTurns;

/** POST /collections/{id}/ask: an event stream read like a pull's (EventSource cannot POST). */
export async function askCollection(collectionId: string, body: Wire.AskBody, onEvent: (event: AskEvent) => void, signal?: AbortSignal): Promise<void> {
  const res = await send("POST", `/collections/${enc(collectionId)}/ask`, body, signal);
  await readEvents<AskEvent>(res, onEvent);
}
export const listConversations = (collectionId: string) => json<Conversation[]>("GET", `/collections/${enc(collectionId)}/conversations`);
export const getConversation = (id: string) => json<ConversationWithTurns>("GET", `/conversations/${enc(id)}`);
export const deleteConversation = (id: string) => json<void>("DELETE", `/conversations/${enc(id)}`);
