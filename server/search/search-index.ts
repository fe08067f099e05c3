import type { FileAcl } from "./stored-acl";

/**
 * The collection index behind one interface, so other engines (PostgreSQL full-text,
 * vectors) can slot in. Documents are keyed by (sourceId, path): several sources may
 * feed one collection.
 */

export interface ChunkInput extends ChunkLocation {
  chunkIndex: number;
  text: string;
}

/**
 * Where a chunk is in its document (a passage over two pages: where it starts). Absent
 * (undefined) or null in an unpaged document.
 */
export interface ChunkLocation {
  /** 1-based: a PDF page, a TIFF frame, a PPTX slide. */
  page?: number | null;
  /** The place in words: "page 7", "slide 3", "sheet Budget". */
  location?: string | null;
  /** The text was read by OCR from a picture ("from a scan"). */
  scanned?: boolean;
}

/** One chunk of one indexed document. */
export interface ChunkKey {
  documentId: string;
  chunkIndex: number;
}

/** A chunk read back by its key: its whole text and where it is in its document (as a search hit says it). */
export interface KeyedChunk {
  text: string;
  page: number | null;
  locationLabel: string | null;
  scanned: boolean;
}

export interface DocumentInput {
  sourceId: string;
  /** Path within the source, e.g. "share/folder/file.pdf" or a drive file id path. */
  path: string;
  title: string;
  size: number;
  modifiedAt: Date;
  /** A provider revision when size + mtime are not the change signal (drive). */
  version: string | null;
  /** Who the file server lets read it (a source with source_permissions); absent or null: every member of the collection's group. */
  permissions?: DocumentPermissions | null;
  chunks: ChunkInput[];
}

/** A document's file-server permissions as a run read them. */
export interface DocumentPermissions {
  /** The server whose SIDs the ACL names (the source's normalised host). */
  server: string;
  acl: FileAcl;
  /** The listing's change time when they were read (moves when the security descriptor changes); null when the connector gives none. */
  changedAt: Date | null;
}

/** One distinct ACL of a collection, kept once however many documents share it. */
export interface StoredAcl {
  /** Its key in searches' `readableAcls`: a hash of its server and normal form, so an id never names another ACL. */
  id: string;
  server: string;
  acl: FileAcl;
}

/** A document's permissions replaced without its content (a run found its change time moved). */
export interface PermissionsUpdate {
  path: string;
  permissions: DocumentPermissions | null;
}

/** A document without its chunks: what a document written in parts starts from. */
export type DocumentHeader = Omit<DocumentInput, "chunks">;

/**
 * A document written in parts, for a file too big to hold whole: its chunks go in batch by
 * batch, then commit() puts it in place of the old version (if any) at once. Until then,
 * searches and listings see the old version; discard() drops what was written.
 */
export interface StagedDocument {
  /** The next chunks, numbered on from the last batch. */
  addChunks(chunks: ChunkInput[]): Promise<void>;
  /** Resolves with the new document's id. */
  commit(): Promise<string>;
  discard(): Promise<void>;
}

/** What incremental re-sync compares against: one entry per indexed document of a source. */
export interface IndexedState {
  size: number;
  modifiedAt: Date;
  version: string | null;
  /** The change time stored with its permissions; null for a document without any. */
  changedAt: Date | null;
  /** Its ACL's id (StoredAcl.id); null: no permissions (a source without source_permissions). */
  aclId: string | null;
  /**
   * Not a document: a file that yielded no text when last read (markEmpty), with the identity it
   * had then, so an unchanged one is skipped unread (changedAt and aclId are null).
   */
  empty?: true;
}

/** A file that yielded no text (nothing to index), as a run found it: what markEmpty remembers. */
export interface EmptyFile {
  path: string;
  size: number;
  modifiedAt: Date;
  version: string | null;
}

export interface DocumentSummary {
  documentId: string;
  sourceId: string;
  path: string;
  title: string;
  size: number;
  modifiedAt: Date;
  chunkCount: number;
  indexedAt: Date;
}

export interface SearchHit {
  documentId: string;
  sourceId: string;
  path: string;
  title: string;
  chunkIndex: number;
  /** Text around the match with matched terms wrapped in <mark>…</mark> (the rest HTML-escaped). */
  snippet: string;
  /** The chunk's whole text (plain), for what needs more than the snippet: an ask's prompt. */
  text: string;
  /** Where the chunk starts in its document (null: unpaged, or indexed before pages were kept). */
  page: number | null;
  /** "page 7", "slide 3", "sheet Budget" (ChunkLocation.location). */
  locationLabel: string | null;
  scanned: boolean;
  /** Higher is better within a tier (see `exact`); results come best first. */
  score: number;
  /** Every query word was found in this chunk in the very form typed (not only a form sharing its stem): such hits rank first. */
  exact: boolean;
  /** "all": the chunk has every query word; "any": no chunk had them all, so the query fell back to any of its words. */
  matched: "all" | "any";
}

/** Narrows a search to some documents before ranking. */
export interface SearchFilter {
  /** File extensions, lower case without the dot ("pdf"); a document matches any of them. */
  types?: string[];
  /** A folder of the source paths ("share/sub"): only documents under it. */
  folder?: string;
  /**
   * The ACLs (StoredAcl ids) the caller may read: documents with any other ACL are left out,
   * documents without one stay. Absent: no permission filter (management, or nothing to hide).
   */
  readableAcls?: readonly string[];
  /**
   * The collection's ACL version readableAcls (or its absence) was computed at. An engine with
   * `checksAclVersion` reads the version in its ranking statement and fails with
   * AclVersionMovedError when it differs; others ignore it.
   */
  aclVersion?: string;
}

/** What a listing or a count may be narrowed by: the caller's readable ACLs (SearchFilter.readableAcls), with the version they were computed at. */
export type ReadableFilter = Pick<SearchFilter, "readableAcls" | "aclVersion">;

export interface SearchOptions extends SearchFilter {
  /** At most this many chunks of one document (a page of documents rather than of one long file's chunks). */
  perDocument?: number;
  /**
   * At most this many chunks of one document come before the other documents' chunks of the
   * same tier (exact, then stemmed); its other chunks follow them, none dropped: a page of
   * chunks one long document cannot fill (docs/decisions/0081-results-spread-by-document.md). Ignored with perDocument.
   */
  firstPerDocument?: number;
}

/** "damaged": the collection's index file cannot be read; re-running its pipeline rebuilds it. */
export type IndexStatus = "ok" | "damaged";

export interface CollectionStats {
  documentCount: number;
  chunkCount: number;
  indexStatus: IndexStatus;
}

/** One collection of statsOfMany, with the caller's filter there. */
export interface CollectionCountRequest {
  collectionId: string;
  filter: ReadableFilter;
}

/** What the collection service needs from the index for counts and deletion. */
export interface CollectionIndex {
  /** Counts; with `filter`, of the documents (and their chunks) the caller may read. */
  stats(collectionId: string, filter?: ReadableFilter): Promise<CollectionStats>;
  /**
   * Several collections' counts, each with its own filter, in answer order (a listing's): one
   * statement on PostgreSQL, one read per collection file on SQLite, in one call.
   */
  statsOfMany(requests: ReadonlyArray<CollectionCountRequest>): Promise<CollectionStats[]>;
  drop(collectionId: string): Promise<void>;
}

export interface SearchIndex extends CollectionIndex {
  /**
   * Adds or replaces one document. The new chunks are written before the old ones are
   * removed, in one transaction, so a failure never leaves the document missing.
   */
  upsertDocument(collectionId: string, doc: DocumentInput): Promise<string>;
  /** Several documents in one transaction (all or none), for ingestion's throughput. */
  upsertDocuments(collectionId: string, docs: DocumentInput[]): Promise<string[]>;
  /** Starts a document written in parts (see StagedDocument). */
  stageDocument(collectionId: string, doc: DocumentHeader): Promise<StagedDocument>;
  /**
   * Drops what staged documents left behind when their process died before commit or
   * discard. Only while nothing is being staged in the collection (an ingestion job's start:
   * jobs run one at a time).
   */
  removeUnfinished(collectionId: string): Promise<void>;
  /**
   * An ingestion job's writes to the collection are over: folds in index maintenance the engine
   * deferred while they ran, so searches stop paying for it (PostgreSQL: the GIN pending lists,
   * whichever collection, before it answers; SQLite: the collection file's segments, and its
   * clean mark, on the writer thread right after it answers, decision 0536). Engines that defer
   * none leave it out.
   */
  settleWrites?(collectionId: string): Promise<unknown>;
  /**
   * Remembers files of one source that yielded no text (docs/decisions/0497-files-without-text-remembered.md),
   * replacing a document or an older mark at each path: indexedState() answers them with `empty`,
   * and nothing else (counts, listings, searches) sees them. An upsert at the path drops its mark.
   */
  markEmpty(collectionId: string, sourceId: string, files: EmptyFile[]): Promise<void>;
  /** Removes documents of one source by path, and the marks of files without text there (markEmpty). */
  removeDocuments(collectionId: string, sourceId: string, paths: string[]): Promise<void>;
  /** Every indexed document of one source, and every file marked empty (`empty`), by path, for incremental re-sync. */
  indexedState(collectionId: string, sourceId: string): Promise<Map<string, IndexedState>>;
  listDocuments(collectionId: string, offset: number, limit: number, filter?: ReadableFilter): Promise<{ total: number; items: DocumentSummary[] }>;
  /** Sets documents' permissions (and change time) in place, content untouched; paths not indexed are passed over. */
  updatePermissions(collectionId: string, sourceId: string, updates: PermissionsUpdate[]): Promise<void>;
  /** The collection's distinct ACLs, and a version that changes when one is added (what a cache of them keys on). */
  acls(collectionId: string): Promise<{ version: string; acls: StoredAcl[] }>;
  /** acls()'s version alone, without reading the ACLs: what a cache checks at each request. */
  aclVersion(collectionId: string): Promise<string>;
  /** Several collections' aclVersion in one call, in order (one statement on PostgreSQL). */
  aclVersions(collectionIds: readonly string[]): Promise<string[]>;
  /** Which of these documents the filter lets through (a vector hit's document, checked before it counts). */
  readableDocuments(collectionId: string, documentIds: string[], filter: ReadableFilter): Promise<Set<string>>;
  search(collectionId: string, query: string, topK: number, options?: SearchOptions): Promise<SearchHit[]>;
  /** search() checks options.aclVersion against the version its own statement read (PostgreSQL): a caller need not read the version before or after. */
  readonly checksAclVersion?: boolean;
  /** One document's chunks in order, as indexed (the embedding stage reads them; see embed-collection.ts). */
  documentChunks(collectionId: string, documentId: string): Promise<ChunkInput[]>;
  /**
   * Some chunks' whole text and place, in the order asked (null for a chunk no longer indexed): a
   * semantic hit carries only its chunk's start (the vector store's preview) and no place; an
   * ask's prompt needs all of the text, and every hit says its page.
   */
  chunksByKey(collectionId: string, chunks: ChunkKey[]): Promise<Array<KeyedChunk | null>>;
  /**
   * Sets a damaged collection's index aside (kept, not deleted) so the next writes rebuild it;
   * answers where it went, or null when there was nothing to move (engines that cannot be damaged so).
   */
  moveAside(collectionId: string): Promise<string | null>;
  /** Closes every open index file (shutdown). */
  close(): Promise<void>;
}
