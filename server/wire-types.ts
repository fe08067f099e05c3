/**
 * The JSON shapes of the API, derived from the presenters (responses) and the request
 * schemas (bodies), for the UI to import with `import type`: a field renamed here breaks
 * the UI's build. Types only, so nothing of the server reaches the UI's bundle. The UI's
 * type check reads the presenters and what they import, without Node's types: presenters
 * import entity and plain type modules only, never services.
 */
import type { askBody } from "./http/ask.schemas";
import type { presentConversation, presentConversationWithTurns } from "./http/ask.presenters";
import type { z } from "zod";
import type { presentMe, presentToken, presentUser } from "./http/accounts.presenters";
import type { presentInvitation, presentIssuedInvitation, presentSignupStatus } from "./http/invitations.presenters";
import type { signInBody, signUpBody } from "./http/accounts.schemas";
import type { presentCollection, presentCollectionWithJobs, presentDocument, presentDocumentPage, presentDocumentResult, presentLocation, presentSearchHit, presentSearchResults } from "./http/collections.presenters";
import type { createCollectionBody, embeddingBody } from "./http/collections.schemas";
import type { presentDataSource } from "./routing/data-sources.presenters";
import type { presentCreatedSmbSource, presentSmbSource } from "./connectors/smb/smb.presenters";
import type { createSmbSourceBody } from "./connectors/smb/smb.schemas";
import type { presentCreatedFolderSource, presentFolderSource, presentFolderStatus } from "./connectors/folder/folder.presenters";
import type { createFolderSourceBody } from "./connectors/folder/folder.schemas";
import type { presentCreatedDriveSource, presentDriveFile, presentDriveSource, presentDriveStatus, presentPickerToken, presentRegisteredFiles } from "./connectors/gdrive/drive.presenters";
import type { createDriveSourceBody, registerDriveFilesBody } from "./connectors/gdrive/drive.schemas";
import type { presentCreatedGroup, presentGroup, presentGroupListing, presentTree } from "./http/groups.presenters";
import type { createGroupBody, setParentBody } from "./http/groups.schemas";
import type { presentCancelledPull, presentLibraryEntry, presentModel, presentModelServerStatus, presentPersonalModel, presentPullEvent } from "./http/models.presenters";
import type { addPersonalModelBody, cancelPullBody, pullModelBody, updatePersonalModelBody } from "./http/models.schemas";
import type { presentJob, presentPipeline, presentSchedule } from "./routing/pipelines.presenters";
import type { createPipelineBody, setScheduleBody } from "./http/pipelines.schemas";
import type { presentSchedulesChanged } from "./routing/data-sources.presenters";
import type { presentInstance } from "./http/instance.presenters";
import type { presentApiKey, presentCreatedApiKey } from "./http/api-keys.presenters";
import type { presentAuditEvent, presentAuditPage } from "./http/audit.presenters";
import type { changePasswordBody } from "./http/accounts.schemas";
import type { presentSmbAccountLink } from "./http/smb-accounts.presenters";
import type { linkSmbAccountBody } from "./http/smb-accounts.schemas";

// ---- accounts and users ----
export type User = ReturnType<typeof presentUser>;
export type Token = ReturnType<typeof presentToken>;
export type SignUpBody = z.input<typeof signUpBody>;
export type SignInBody = z.input<typeof signInBody>;

export type Instance = ReturnType<typeof presentInstance>;
/** GET /users/me: the user and `is_admin`. */
export type Me = ReturnType<typeof presentMe>;
export type Invitation = ReturnType<typeof presentInvitation>;
/** A new invitation, with its link (shown this once). */
export type IssuedInvitation = ReturnType<typeof presentIssuedInvitation>;
export type SignupStatus = ReturnType<typeof presentSignupStatus>;
export type ChangePasswordBody = z.input<typeof changePasswordBody>;
export type ApiKey = ReturnType<typeof presentApiKey>;
export type CreatedApiKey = ReturnType<typeof presentCreatedApiKey>;
export type AuditEvent = ReturnType<typeof presentAuditEvent>;
export type AuditPage = ReturnType<typeof presentAuditPage>;
/** A linked Windows account (issue 33): whose file-server permissions apply to the caller on that server. */
export type SmbAccountLink = ReturnType<typeof presentSmbAccountLink>;
export type LinkSmbAccountBody = z.input<typeof linkSmbAccountBody>;

// ---- groups ----
export type Group = ReturnType<typeof presentGroup>;
export type GroupListing = ReturnType<typeof presentGroupListing>;
export type GroupTreeNode = ReturnType<typeof presentTree>;
export type CreatedGroup = ReturnType<typeof presentCreatedGroup>;
export type CreateGroupBody = z.input<typeof createGroupBody>;
export type SetParentBody = z.input<typeof setParentBody>;

// ---- collections ----
export type Collection = ReturnType<typeof presentCollection>;
export type SearchHit = ReturnType<typeof presentSearchHit>;
export type SearchResults = ReturnType<typeof presentSearchResults>;
/** One document of a search with group_by=document, its best passages under it. */
export type DocumentResult = ReturnType<typeof presentDocumentResult>;
/** Where a document is: `path` as the user's machine names it, `url` to open it; null when unknown. */
export type DocumentLocation = ReturnType<typeof presentLocation>;
export type DocumentSummary = ReturnType<typeof presentDocument>;
export type DocumentPage = ReturnType<typeof presentDocumentPage>;
export type CreateCollectionBody = z.input<typeof createCollectionBody>;
export type SetEmbeddingBody = z.input<typeof embeddingBody>;
/** PUT /collections/{id}/embedding: the collection, and the ingestion jobs started to embed what it holds. */
export type CollectionWithJobs = ReturnType<typeof presentCollectionWithJobs>;
export type SearchMode = SearchResults["mode"];

// ---- data sources (every kind, SMB) ----
export type DataSource = ReturnType<typeof presentDataSource>;
export type SmbSource = ReturnType<typeof presentSmbSource>;
/** GET /data_sources: each source with its SMB details (null for other kinds) and what its kind adds; built in data-sources.presenters.ts. */
export type DataSourceListing = DataSource & { smb_source: SmbSource | null; folder_source?: FolderSource };
export type CreatedSmbSource = ReturnType<typeof presentCreatedSmbSource>;
export type CreateSmbSourceBody = z.input<typeof createSmbSourceBody>;

// ---- data sources (folders) ----
export type FolderSource = ReturnType<typeof presentFolderSource>;
export type FolderStatus = ReturnType<typeof presentFolderStatus>;
export type CreatedFolderSource = ReturnType<typeof presentCreatedFolderSource>;
export type CreateFolderSourceBody = z.input<typeof createFolderSourceBody>;

// ---- Google Drive ----
export type DriveStatus = ReturnType<typeof presentDriveStatus>;
export type DriveFile = ReturnType<typeof presentDriveFile>;
export type DriveSource = ReturnType<typeof presentDriveSource>;
export type PickerToken = ReturnType<typeof presentPickerToken>;
export type CreatedDriveSource = ReturnType<typeof presentCreatedDriveSource>;
export type DriveFilesResult = ReturnType<typeof presentRegisteredFiles>;
export type CreateDriveSourceBody = z.input<typeof createDriveSourceBody>;
export type RegisterDriveFilesBody = z.input<typeof registerDriveFilesBody>;

// ---- pipelines and ingestion ----
export type Pipeline = ReturnType<typeof presentPipeline>;
export type IngestJob = ReturnType<typeof presentJob>;
export type PipelineScheduleRecord = ReturnType<typeof presentSchedule>;
export type SetScheduleBody = z.input<typeof setScheduleBody>;
export type SchedulesChanged = ReturnType<typeof presentSchedulesChanged>;
export type CreatePipelineBody = z.input<typeof createPipelineBody>;

// ---- models ----
export type CatalogModel = ReturnType<typeof presentModel>;
export type LibraryModel = ReturnType<typeof presentLibraryEntry>;
export type PersonalModel = ReturnType<typeof presentPersonalModel>;
export type PullEvent = ReturnType<typeof presentPullEvent>;
export type PullModelBody = z.input<typeof pullModelBody>;
export type ModelServerStatus = ReturnType<typeof presentModelServerStatus>;
export type CancelledPull = ReturnType<typeof presentCancelledPull>;
export type CancelPullBody = z.input<typeof cancelPullBody>;
export type AddPersonalModelBody = z.input<typeof addPersonalModelBody>;
export type UpdatePersonalModelBody = z.input<typeof updatePersonalModelBody>;

// ---- ask a collection ----
export type AskBody = z.input<typeof askBody>;
export type AskEvent = import("./ask/ask-events").AskEvent;
export type AskSource = import("./ask/ask-events").AskSource;
export type Conversation = ReturnType<typeof presentConversation>;
export type ConversationWithTurns = ReturnType<typeof presentConversationWithTurns>;
