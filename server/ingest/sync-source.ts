import { getMaxListeners, setMaxListeners } from "node:events";
import type { Readable } from "node:stream";
import type { Connector, RemoteEntry } from "../connectors/connector";
import { ConnectorUnreachableError } from "../connectors/connector";
import type { DocumentHeader, EmptyFile, IndexedState, SearchIndex } from "../search/search-index";
import { PermissionUpdates, permissionReader, type PermissionReader } from "./permission-updates";
import { PermissionPrefetch } from "./permission-prefetch";
import { ChangeTimeTrust } from "./change-time-trust";
import type { JobCounters } from "./job-counters";
import { JobInterrupted } from "./job-interrupted";
import { isSupported, titleFromFileName } from "./parse/file-types";
import { OCR_OFF } from "./parse/ocr/ocr-settings";
import { steadyOnlyFirst, type ParserPool } from "./parse/parser-pool";
import type { ParseResult } from "./parse/parse-types";
import { isUnder, NothingReadableError, walkSource } from "./walk-source";
import { isStreamed, streamTextFile } from "./streamed-text-file";
import { BatchedIndexWriter, isFatalIndexError, type BatchPolicy } from "./batched-index-writer";
import { ByteBudget } from "./byte-budget";
import { ownedCopy, releaseBytes, spansItsBuffer } from "../connectors/owned-bytes";
import { isDiskFull, type DiskGuard } from "../disk/disk-space";
import { IndexDamagedError } from "../search/index-damage";

/**
 * A job's data path: list the source, read, parse and index new and changed files, leave
 * unchanged ones unread, remove documents whose files are gone. It loads no TypeORM and no
 * express: it runs on an ingestion job's own thread (job-thread.worker.ts) as well as in-process.
 */

/**
 * Files parsed whole (every format but streamed text) larger than this are not read into
 * memory; they are listed as failed. Streamed text files have no size limit.
 */
const MAX_PARSED_FILE_BYTES = 200 * 1024 * 1024;
/**
 * Files read and parsed at once: overlaps network reads with parsing and indexing, and gives
 * the SMB client and the parser pool requests to send together (see smb2-connection.ts and
 * parser-pool.ts). Measured with `npm run bench`: 32 beat 16 and matched 64.
 */
const FILES_IN_FLIGHT = 32;
/** Room for the job's signal's listeners besides its files' parses: its index writes in flight, each waiting through a database outage on the API's thread (database-outage.ts), and the job's own waits. */
const OTHER_SIGNAL_LISTENERS = 8;
/**
 * Bytes of those files held at once, so memory stays bounded whatever the file sizes. 16 MB,
 * not 64: a run of 1 MB PDFs is parse-bound, and every file read ahead of the parsers was held
 * (with its copies) for nothing; a job with 20 of them never filled 64 MB and one with 200 did,
 * so the peak grew with the corpus (`npm run bench -- --memory --binary 100`, with each file's
 * bytes freed once parsed on both sides: the job thread's buffers at most 20 MB against 39, peak
 * RSS 281 against 332 MB; docs/decisions/0196-bytes-freed-once-parsed.md). Small files are bounded by
 * FILES_IN_FLIGHT long before this.
 */
const BYTES_IN_FLIGHT = 16 * 1024 * 1024;
/**
 * Big text files streamed at once, outside that byte budget: each holds a few MB (a read, its
 * text, a batch of chunks being written) and, on PostgreSQL, a connection for its transaction.
 */
const STREAMED_FILES_AT_ONCE = 2;

/** What of the index a job's data path uses. */
export type IngestIndex = Pick<
  SearchIndex,
  "indexedState" | "moveAside" | "removeUnfinished" | "removeDocuments" | "markEmpty" | "upsertDocuments" | "upsertDocument" | "stageDocument" | "settleWrites" | "updatePermissions" | "acls"
> & {
  /** How the index takes its writes best (PARALLEL_BATCHES unless it says). */
  readonly batching?: BatchPolicy;
};

export interface SyncDeps {
  index: IngestIndex;
  parsers: Pick<ParserPool, "parse">;
  /** DATA_DIR's free-space minimum; null where storage is not under DATA_DIR (a team server on PostgreSQL). */
  disk: DiskGuard | null;
  /** How the writes are batched where the index does not say (the process's choice for a database); absent: PARALLEL_BATCHES. */
  batching?: BatchPolicy;
}

/** The documents this source has in the collection; a damaged index file is set aside first, so this run rebuilds it. */
async function indexedStateOrRebuild(
  deps: SyncDeps,
  collectionId: string,
  sourceId: string,
  progress: JobCounters,
  read: Promise<Map<string, IndexedState>>,
): Promise<Map<string, IndexedState>> {
  try {
    return await read;
  } catch (error) {
    if (!(error instanceof IndexDamagedError)) throw error;
    const aside = await deps.index.moveAside(collectionId);
    progress.noteError("index", `The collection's index was damaged; it was moved aside${aside ? ` to ${aside}` : ""} and is rebuilt by this run`);
    return deps.index.indexedState(collectionId, sourceId);
  }
}

/**
 * `permissionServer`: for a source with source_permissions, the file server (normalised host)
 * whose permissions each document keeps (read with the connector's readPermissions); null: a
 * plain source, whose documents every member sees.
 */
export async function syncSource(
  deps: SyncDeps,
  connector: Connector,
  sourceId: string,
  collectionId: string,
  progress: JobCounters,
  signal: AbortSignal,
  permissionServer: string | null = null,
): Promise<void> {
  const checkAbort = () => {
    if (signal.aborted) throw new JobInterrupted();
  };
  // Each file in flight waits on the signal while parsed (its parse ends when the job is
  // cancelled) and lets go after: up to FILES_IN_FLIGHT listeners at once is the design, not a
  // leak, and Node's default of 10 printed a MaxListenersExceededWarning to the server's stderr.
  setMaxListeners(Math.max(getMaxListeners(signal), FILES_IN_FLIGHT + OTHER_SIGNAL_LISTENERS), signal);
  progress.at("Connecting to the source");
  // The collection's indexed state is read while the connection is made: neither needs the
  // other, and each is a few round trips (to the server; to the API's thread or the database).
  // Nothing is written before the source answers.
  const read = deps.index.indexedState(collectionId, sourceId);
  read.catch(() => undefined); // an unreachable source fails the job first; the read's own failure is taken below
  try {
    await connector.test();
  } catch (error) {
    throw new Error(`Source unreachable: ${(error as Error).message}`);
  }
  const permissions = permissionReader(connector, permissionServer);
  const indexed = await indexedStateOrRebuild(deps, collectionId, sourceId, progress, read);
  // Jobs run one at a time: whatever a killed job left half-written is nobody's now.
  await deps.index.removeUnfinished(collectionId);

  // An unchanged file's permissions are read while the listing goes on (they are all it needs),
  // but for one whose share shows change times to trust and whose change time stayed (decision 0485).
  const prefetch = permissions ? new PermissionPrefetch(permissions) : null;
  const trust = permissions && permissionServer !== null ? ChangeTimeTrust.of({ connector, index: deps.index, collectionId, server: permissionServer, indexed }) : null;
  const walk = await progress.stats.time("listing", () =>
    walkSource(connector, {
      signal,
      onFolder: (folder) => progress.at(`Discovering files in ${folder || "the source"}`),
      onFile: (file) => {
        progress.discovered();
        trust?.noteListed(file);
        const state = indexed.get(file.path);
        if (prefetch && !file.refused && !state?.empty && unchanged(file, state) && !trust?.likelyKept(file, state!)) prefetch.offer(file);
      },
      onUnreadable: (folder, message) => progress.noteError(folder, message),
    }),
  ).catch((error: unknown) => {
    prefetch?.stop();
    checkAbort();
    if (error instanceof NothingReadableError) throw error;
    if (error instanceof ConnectorUnreachableError) throw new Error(`Source unreachable: ${error.message}`);
    throw new Error(`The source could not be read: ${(error as Error).message}`);
  });
  progress.discoveryComplete = true;
  trust?.listingComplete();
  await progress.flush();

  const writer = new BatchedIndexWriter(deps.index, collectionId, progress, deps.index.batching ?? deps.batching);
  const permissionUpdates = new PermissionUpdates(deps.index, collectionId, sourceId, progress);
  const budget = new ByteBudget(BYTES_IN_FLIGHT);
  const streams = new ByteBudget(STREAMED_FILES_AT_ONCE); // counts files, not bytes
  try {
    await forEachConcurrently(steadyOnlyFirst(walk.files), FILES_IN_FLIGHT, async (file) => {
      checkAbort();
      await deps.disk?.assertRoomNow();
      const state = indexed.get(file.path);
      if (file.refused) {
        // Whatever was indexed under this path is no longer the source's to show.
        if (state) await deps.index.removeDocuments(collectionId, sourceId, [file.path]);
        return progress.failed(file.path, file.refused);
      }
      if (state?.empty && unchanged(file, state)) {
        // It had no text when last read and has not changed since: not read, parsed or OCRed again, and it has no document whose permissions could matter (decision 0497).
        return progress.skipped(file.path, "empty");
      }
      if (unchanged(file, state)) {
        // Content as it was: only its permissions are looked at (read, most while the listing went on, unless its change time says they stayed).
        if (trust && (await trust.kept(file, state!))) return progress.processed("unchanged");
        if (await permissionUpdates.check(file, state!, prefetch?.reader ?? null)) progress.processed("unchanged");
        return;
      }
      if (!isSupported(file.name)) {
        progress.stats.file(file.name, { bytes: 0 });
        return progress.skipped(file.path, "type not supported");
      }
      const target = { deps, connector, collectionId, sourceId, progress, signal, permissions };
      if (isStreamed(file)) {
        const held = await streams.acquire(1);
        try {
          await ingestStreamed(target, file, state, checkAbort);
        } finally {
          streams.release(held);
        }
      } else await ingestFile(target, writer, budget, file, state);
    });
  } finally {
    prefetch?.stop();
  }
  await writer.flush();
  await permissionUpdates.flush();
  checkAbort();

  const seen = new Set(walk.files.map((f) => f.path));
  const gone = [...indexed.keys()].filter((path) => !seen.has(path) && !isUnder(path, walk.unreadable));
  if (gone.length) {
    // A gone file without text loses its mark too, but it was no document: files_removed counts documents.
    const documents = gone.filter((path) => !indexed.get(path)!.empty).length;
    if (documents) progress.at(`Removing ${documents} deleted file(s) from the collection`);
    await progress.stats.time("commit", () => deps.index.removeDocuments(collectionId, sourceId, gone));
    if (documents) progress.removed(documents);
  }
  // The job's end: PostgreSQL folds its GIN pending lists within the job if it inserted chunks (decision 0542); SQLite's writer answers at once and settles right after (decision 0536).
  if (deps.index.settleWrites) await progress.stats.time("commit", () => deps.index.settleWrites!(collectionId));
}

function unchanged(file: RemoteEntry, state: IndexedState | undefined): boolean {
  if (!state) return false;
  if (file.version !== undefined || state.version !== null) return file.version === state.version;
  return state.size === file.size && state.modifiedAt.getTime() === file.modifiedAt.getTime();
}

/** A file new to the collection's documents is added, also one that had no text before (only its mark was there). */
function isDocument(state: IndexedState | undefined): boolean {
  return state !== undefined && !state.empty;
}

/** A file without text as markEmpty keeps it: the identity unchanged() compares. */
function emptyFile(file: RemoteEntry): EmptyFile {
  return { path: file.path, size: file.size, modifiedAt: file.modifiedAt, version: file.version ?? null };
}

/** Where a file's document goes, and what reports on it. */
interface Target {
  deps: SyncDeps;
  connector: Connector;
  collectionId: string;
  sourceId: string;
  progress: JobCounters;
  signal: AbortSignal;
  permissions: PermissionReader | null;
}

/** A file read whole and parsed in a worker; its document goes to the index with others in a batch. */
async function ingestFile(
  { deps, connector, collectionId, sourceId, progress, signal, permissions }: Target,
  writer: BatchedIndexWriter,
  budget: ByteBudget,
  file: RemoteEntry,
  state: IndexedState | undefined,
): Promise<void> {
  if (file.size > MAX_PARSED_FILE_BYTES) {
    progress.stats.file(file.name, { bytes: 0, failed: true });
    return progress.failed(file.path, `File is larger than the ${MAX_PARSED_FILE_BYTES / 1024 / 1024} MB indexing limit`);
  }
  progress.at(`Indexing ${file.path}`);
  let bytesRead = 0;
  let failed = false;
  let parseSeconds = 0;
  const held = await budget.acquire(file.size);
  try {
    // Before the content: a file whose descriptor cannot be read fails without being read.
    const acl = permissions ? await permissions(file) : null;
    const bytes = await progress.stats.time("read", async () => readAll(await connector.read(file.path, file.size), MAX_PARSED_FILE_BYTES));
    // parse() transfers the buffer to a worker thread, which empties it here: count first.
    bytesRead = bytes.length;
    let parsed: ParseResult;
    try {
      parsed = await deps.parsers.parse(file.name, bytes, (text) => progress.at(text), signal);
    } finally {
      // Parsed or failed, the parser pool no longer keeps them for a retry: freed now, not while the document waits for its batch.
      releaseBytes(bytes);
    }
    if (parsed.timing) {
      progress.stats.add("parse", parsed.timing.parseSeconds);
      progress.stats.add("chunk", parsed.timing.chunkSeconds);
      progress.stats.add("ocr", parsed.timing.ocrSeconds ?? 0);
      parseSeconds = parsed.timing.parseSeconds + parsed.timing.chunkSeconds + (parsed.timing.ocrSeconds ?? 0);
    }
    if (parsed.kind === "skipped") {
      const reason = parsed.reason === "unsupported file type" ? "type not supported" : parsed.reason === OCR_OFF ? OCR_OFF : "empty";
      // A file that no longer has any text must not keep answering searches with its old text.
      // One without text is remembered (its document, if any, goes with that write), so an
      // unchanged one is not read again; one waiting for OCR is not: turning OCR on reads it.
      if (reason === "empty") await deps.index.markEmpty(collectionId, sourceId, [emptyFile(file)]);
      else if (state) await deps.index.removeDocuments(collectionId, sourceId, [file.path]);
      return progress.skipped(file.path, reason, bytesRead);
    }
    // Counted as processed once its batch is written.
    await writer.add(
      {
        sourceId,
        path: file.path,
        title: parsed.title,
        size: file.size,
        modifiedAt: file.modifiedAt,
        version: file.version ?? null,
        permissions: acl,
        chunks: parsed.chunks,
      },
      bytesRead,
      isDocument(state) ? "changed" : "added",
    );
  } catch (error) {
    // A dead connection is the source failing, not this file: fail the job.
    if (error instanceof ConnectorUnreachableError) throw new Error(`Source unreachable: ${error.message}`);
    // So are a full disk, a damaged index and a database gone past the grace: every later file would fail the same way; and a shutdown.
    if (isFatalIndexError(error) || isDiskFull(error) || signal.aborted) throw error;
    failed = true;
    progress.failed(file.path, (error as Error).message || "Could not be read", bytesRead);
  } finally {
    budget.release(held);
    progress.stats.file(file.name, { bytes: bytesRead, failed, parseSeconds });
  }
}

/**
 * A big text file streamed into the index as a staged document (see streamed-text-file.ts):
 * bytes_processed moves as its chunks are written, and it replaces its old version only once
 * it is written whole.
 */
async function ingestStreamed(
  { deps, connector, collectionId, sourceId, progress, permissions }: Target,
  file: RemoteEntry,
  state: IndexedState | undefined,
  checkAbort: () => void,
): Promise<void> {
  progress.at(`Indexing ${file.path}`);
  let counted = 0;
  let failed = false;
  const header: DocumentHeader = {
    sourceId,
    path: file.path,
    title: titleFromFileName(file.name),
    size: file.size,
    modifiedAt: file.modifiedAt,
    version: file.version ?? null,
  };
  try {
    if (permissions) header.permissions = await permissions(file);
    const { staged, chunks } = await streamTextFile({
      read: () => connector.read(file.path, file.size),
      stage: () => deps.index.stageDocument(collectionId, header),
      // A file read again (it was not UTF-8) counts its bytes once.
      onWritten: (bytes) => {
        if (bytes > counted) progress.advance(bytes - counted);
        counted = Math.max(counted, bytes);
      },
      checkAbort,
    });
    if (chunks === 0) {
      await staged.discard();
      // As a parsed file without text: remembered, any old document gone with it.
      await deps.index.markEmpty(collectionId, sourceId, [emptyFile(file)]);
      return progress.skipped(file.path, "empty");
    }
    try {
      await progress.stats.time("commit", () => staged.commit());
    } catch (error) {
      await staged.discard().catch(() => undefined);
      if (isFatalIndexError(error)) throw error;
      throw new Error(`Could not be added to the index: ${(error as Error).message}`);
    }
    progress.processed(isDocument(state) ? "changed" : "added");
  } catch (error) {
    if (error instanceof JobInterrupted) throw error;
    if (error instanceof ConnectorUnreachableError) throw new Error(`Source unreachable: ${error.message}`);
    if (isFatalIndexError(error)) throw error;
    failed = true;
    progress.failed(file.path, (error as Error).message || "Could not be read");
  } finally {
    progress.stats.file(file.name, { bytes: counted, failed });
  }
}

async function readAll(stream: Readable, limit: number): Promise<Buffer> {
  const parts: Buffer[] = [];
  let total = 0;
  for await (const chunk of stream) {
    total += (chunk as Buffer).length;
    if (total > limit) {
      stream.destroy();
      throw new Error("File grew past the indexing limit while it was read");
    }
    parts.push(chunk as Buffer);
  }
  // One chunk of its own is the file's buffer as it is; else one is made, and the chunks (the
  // reader's, see Connector.read) are freed now rather than left for V8's next collection.
  if (parts.length === 1 && spansItsBuffer(parts[0])) return parts[0];
  const whole = ownedCopy(parts, total);
  for (const part of parts) releaseBytes(part);
  return whole;
}

/** Runs fn over items with at most `limit` at once; the first thrown error stops the rest. */
async function forEachConcurrently<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failure: unknown = null;
  const lane = async () => {
    while (failure === null && next < items.length) {
      const item = items[next++];
      try {
        await fn(item);
      } catch (error) {
        failure ??= error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  if (failure !== null) throw failure;
}
