import crypto from "node:crypto";
import type { DataSource, QueryRunner } from "typeorm";
import type { ChunkInput, DocumentHeader, DocumentInput, EmptyFile, StagedDocument } from "../search-index";
import { stagedDocument } from "../staged-document";
import { CONFIG, EXACT_CONFIG } from "./postgres-fts-schema";
import { pgText, wordsOf } from "./postgres-fts-words";
import { inTransaction } from "./postgres-transaction";
import { aclIdsOf } from "./postgres-fts-acls";

/** The index's writes: documents replaced in batches, a document staged on a connection of its own, removals, and the GIN indexes' upkeep. */

/** 64 MB: about 20,000 chunks' entries per index (a 2,000-file share), one fold each; see INDEX_WRITE. */
const GIN_PENDING_LIST_KB = 64 * 1024;
/**
 * Index writes commit without waiting for their WAL to reach disk: the index is rebuilt from the
 * sources, a crash can lose only the last moments of writes (the documents then read as not
 * indexed and the next run indexes them), and any later synchronous commit, such as the job's
 * end, flushes them first. And their GIN entries wait in the indexes' pending lists up to
 * GIN_PENDING_LIST_KB (PostgreSQL's default is 4 MB) before a write folds them in, so a job
 * folds each index a few times rather than every few hundred chunks; settleWrites() folds the
 * rest when the job ends. See docs/decisions/0121-gin-pending-list-and-fold.md.
 */
const INDEX_WRITE = `SELECT set_config('synchronous_commit', 'off', true), set_config('gin_pending_list_limit', '${GIN_PENDING_LIST_KB}', true)`;
/**
 * Chunks per INSERT: a batch of more (up to 4,000, batched-index-writer.ts) goes in several
 * statements of one transaction. Preparing a statement's parameters (the words, and the pg
 * driver's array literals of bodies and words) is synchronous on the API's thread of a team
 * server, ~35 µs a chunk of real text: 4,000 at once held the event loop for 100-150 ms, 500
 * for under 20 ms, and the database does the same work per row either way.
 */
const CHUNKS_PER_STATEMENT = 500;
/** The GIN indexes of search_chunks, whose pending lists settleGinIndexes() folds in. */
const GIN_INDEXES = ["search_chunks_tsv", "search_chunks_tsv_exact"];
/** SQLSTATE 42501: not the owner of the index. */
const INSUFFICIENT_PRIVILEGE = "42501";

/** Adds or replaces documents in one transaction; a document's old version goes only when its new one is in (the transaction makes it all or none). */
export async function upsertBatch(db: DataSource, collection: string, docs: DocumentInput[]): Promise<string[]> {
  const ids = docs.map(() => crypto.randomUUID());
  const keys = new Set(docs.map((d) => `${d.sourceId}\u0000${d.path}`));
  // Three statements per batch, however many documents; a batch naming one path twice
  // (never from ingestion) goes document by document so the later one wins.
  const groups = keys.size === docs.length ? [docs.map((doc, i) => ({ doc, id: ids[i] }))] : docs.map((doc, i) => [{ doc, id: ids[i] }]);
  await inTransaction(db, async (q) => {
    await q.query(INDEX_WRITE);
    for (const group of groups) await writeDocuments(q, collection, group);
  });
  return ids;
}

/**
 * A document written in parts: one transaction from start to commit, on a connection of its
 * own, so the old version goes and the new one comes in at once for every other reader, and a
 * process that dies mid-way leaves nothing (PostgreSQL rolls the transaction back).
 * `committed` hears the chunks written once the commit is through.
 */
export async function openStagedDocument(db: DataSource, collection: string, doc: DocumentHeader, committed: (chunkCount: number) => void): Promise<StagedDocument> {
  const q = db.createQueryRunner();
  const title = pgText(doc.title);
  const path = pgText(doc.path);
  const end = async (how: "commitTransaction" | "rollbackTransaction") => {
    try {
      await q[how]();
    } finally {
      await q.release();
    }
  };
  const id = crypto.randomUUID();
  try {
    await q.connect();
    await q.startTransaction();
    await q.query(INDEX_WRITE);
    // The old version goes first: UNIQUE (collection, source, path) admits one row, and no
    // other reader sees either change before the commit.
    await writeDocuments(q, collection, [{ doc: { ...doc, chunks: [] }, id }]);
  } catch (error) {
    await end("rollbackTransaction").catch(() => undefined);
    throw error;
  }
  return stagedDocument(id, {
    add: (documentId, chunks) => insertChunks(q, collection, [{ title, path }], chunks.map((c) => chunkRow(documentId, 1, c))),
    commit: async (documentId, chunkCount) => {
      await q.query("UPDATE search_documents SET chunk_count = $2, indexed_at = $3 WHERE id = $1", [documentId, chunkCount, Date.now()]);
      await end("commitTransaction");
      committed(chunkCount);
    },
    discard: () => end("rollbackTransaction"),
  });
}

/**
 * Folds both GIN indexes' pending lists into their trees, one connection each (they are
 * independent), so searches no longer scan them entry by entry. Only the tables' owner may
 * (the role that created them, normally this one); for any other, autovacuum does it later,
 * which is no error: the pending entries are searchable either way.
 */
export async function settleGinIndexes(db: DataSource): Promise<void> {
  await Promise.all(
    GIN_INDEXES.map((name) =>
      db.query("SELECT gin_clean_pending_list($1::regclass)", [name]).catch((error: unknown) => {
        if ((error as { code?: string }).code !== INSUFFICIENT_PRIVILEGE) throw error;
      }),
    ),
  );
}

/**
 * Removes documents of one source by path (their chunks go with them: ON DELETE CASCADE), and
 * the marks of files without text there, in one statement (a data-modifying WITH runs either way).
 */
export async function removeByPaths(db: DataSource, collection: string, sourceId: string, paths: string[]): Promise<void> {
  await db.query(
    `WITH marks AS (DELETE FROM search_empty_files WHERE collection_id = $1 AND source_id = $2 AND path = ANY($3::text[]))
     DELETE FROM search_documents WHERE collection_id = $1 AND source_id = $2 AND path = ANY($3::text[])`,
    [collection, sourceId, paths.map(pgText)],
  );
}

/** Remembers files without text, in one transaction; a document at the path goes (the file no longer has any). */
export async function writeEmptyMarks(db: DataSource, collection: string, sourceId: string, files: EmptyFile[]): Promise<void> {
  // One row per path: ON CONFLICT cannot touch a row twice in one statement (the last one wins).
  const byPath = new Map(files.map((f) => [pgText(f.path), f]));
  const paths = [...byPath.keys()];
  const marks = [...byPath.values()];
  await inTransaction(db, async (q) => {
    await q.query("SELECT set_config('synchronous_commit', 'off', true)");
    await q.query("DELETE FROM search_documents WHERE collection_id = $1 AND source_id = $2 AND path = ANY($3::text[])", [collection, sourceId, paths]);
    await q.query(
      `INSERT INTO search_empty_files (collection_id, source_id, path, size, modified_at, version)
       SELECT $1, $2, x.path, x.size, x.modified_at, x.version FROM unnest($3::text[], $4::bigint[], $5::bigint[], $6::text[]) AS x(path, size, modified_at, version)
       ON CONFLICT (collection_id, source_id, path) DO UPDATE SET size = excluded.size, modified_at = excluded.modified_at, version = excluded.version`,
      [collection, sourceId, paths, marks.map((f) => nullIfNaN(f.size) ?? 0), marks.map((f) => f.modifiedAt.getTime()), marks.map((f) => f.version)],
    );
  });
}

/** Removes a collection's chunks and documents in one transaction. */
export async function dropCollection(db: DataSource, collection: string): Promise<void> {
  await inTransaction(db, async (q) => {
    await q.query("DELETE FROM search_chunks WHERE collection_id = $1", [collection]);
    await q.query("DELETE FROM search_documents WHERE collection_id = $1", [collection]);
    await q.query("DELETE FROM search_acls WHERE collection_id = $1", [collection]);
    await q.query("DELETE FROM search_empty_files WHERE collection_id = $1", [collection]);
  });
}

/** Replaces documents (old versions by source and path out, new ones in), inside the caller's transaction. */
async function writeDocuments(q: QueryRunner, collection: string, group: { doc: DocumentInput; id: string }[]): Promise<void> {
  const docs = group.map(({ doc, id }) => ({ doc, id, title: pgText(doc.title), path: pgText(doc.path) }));
  await q.query(
    `DELETE FROM search_documents d USING unnest($2::text[], $3::text[]) AS x(source_id, path)
     WHERE d.collection_id = $1 AND d.source_id = x.source_id AND d.path = x.path`,
    [collection, docs.map((d) => d.doc.sourceId), docs.map((d) => d.path)],
  );
  // A path that gets a document is no longer a file without text (writeEmptyMarks).
  await q.query(
    `DELETE FROM search_empty_files m USING unnest($2::text[], $3::text[]) AS x(source_id, path)
     WHERE m.collection_id = $1 AND m.source_id = x.source_id AND m.path = x.path`,
    [collection, docs.map((d) => d.doc.sourceId), docs.map((d) => d.path)],
  );
  const now = Date.now();
  const acls = await aclIdsOf(q, collection, docs.map((d) => d.doc.permissions));
  await q.query(
    `INSERT INTO search_documents (id, collection_id, source_id, path, title, size, modified_at, version, chunk_count, indexed_at, acl, changed_at)
     SELECT x.id, $1, x.source_id, x.path, x.title, x.size, x.modified_at, x.version, x.chunk_count, $10, x.acl, x.changed_at
     FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::bigint[], $8::text[], $9::integer[], $11::text[], $12::bigint[])
       AS x(id, source_id, path, title, size, modified_at, version, chunk_count, acl, changed_at)`,
    [
      collection,
      docs.map((d) => d.id),
      docs.map((d) => d.doc.sourceId),
      docs.map((d) => d.path),
      docs.map((d) => d.title),
      docs.map((d) => nullIfNaN(d.doc.size)),
      docs.map((d) => d.doc.modifiedAt.getTime()),
      docs.map((d) => d.doc.version),
      docs.map((d) => d.doc.chunks.length),
      now,
      acls,
      docs.map((d) => d.doc.permissions?.changedAt?.getTime() ?? null),
    ],
  );
  const chunks = docs.flatMap((d, i) => d.doc.chunks.map((c) => chunkRow(d.id, i + 1, c)));
  await insertChunks(q, collection, docs, chunks);
}

/** What every chunk of a document repeats: its title and path. */
interface ChunkHead {
  title: string;
  path: string;
}

interface ChunkRow {
  id: string;
  index: number;
  /** 1-based position of its document's head in the heads passed with it. */
  head: number;
  body: string;
  page: number | null;
  location: string | null;
  scanned: boolean;
}

function chunkRow(id: string, head: number, chunk: ChunkInput): ChunkRow {
  return { id, index: chunk.chunkIndex, head, body: pgText(chunk.text), page: chunk.page ?? null, location: chunk.location == null ? null : pgText(chunk.location), scanned: chunk.scanned ?? false };
}

/**
 * Inserts chunks with their tsvectors: `tsv` is title (A), path (B) and body (C) under the
 * stemming configuration, `tsv_exact` the same words as typed, without positions (the exact
 * tier asks for words, never phrases). Each head's part is computed once and put in front of
 * each of its chunks' bodies, the same tsvector as computing the three parts per chunk.
 * Rows go in in the order given, so ids (ties in ranking) follow chunk order.
 */
async function insertChunks(q: QueryRunner, collection: string, heads: ChunkHead[], chunks: ChunkRow[]): Promise<void> {
  for (let start = 0; start < chunks.length; start += CHUNKS_PER_STATEMENT) {
    const slice = chunks.slice(start, start + CHUNKS_PER_STATEMENT);
    // Only the heads this slice's chunks belong to, renumbered in order.
    const renumbered = new Map<number, number>();
    for (const c of slice) if (!renumbered.has(c.head)) renumbered.set(c.head, renumbered.size + 1);
    const sliceHeads = [...renumbered.keys()].map((n) => heads[n - 1]);
    await insertChunkRows(q, collection, sliceHeads, slice.map((c) => ({ ...c, head: renumbered.get(c.head)! })));
  }
}

/** One INSERT of up to CHUNKS_PER_STATEMENT chunks (insertChunks). */
async function insertChunkRows(q: QueryRunner, collection: string, heads: ChunkHead[], chunks: ChunkRow[]): Promise<void> {
  if (chunks.length === 0) return;
  await q.query(
    `WITH heads AS MATERIALIZED (
       SELECT h.n, h.title, h.path,
              setweight(to_tsvector('${CONFIG}', h.title_words), 'A') || setweight(to_tsvector('${CONFIG}', h.path_words), 'B') AS tsv,
              to_tsvector('${EXACT_CONFIG}', h.title_words || ' ' || h.path_words) AS tsv_exact
       FROM unnest($2::text[], $3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS h(title, path, title_words, path_words, n)
     )
     INSERT INTO search_chunks (collection_id, document_id, chunk_index, title, path, body, tsv, tsv_exact, page, location, scanned)
     SELECT $1, x.document_id, x.chunk_index, h.title, h.path, x.body,
            h.tsv || setweight(to_tsvector('${CONFIG}', x.body_words), 'C'),
            strip(h.tsv_exact || to_tsvector('${EXACT_CONFIG}', x.body_words)),
            x.page, x.location, x.scanned
     FROM unnest($6::text[], $7::integer[], $8::integer[], $9::text[], $10::text[], $11::integer[], $12::text[], $13::boolean[])
       WITH ORDINALITY AS x(document_id, chunk_index, head, body, body_words, page, location, scanned, n)
     JOIN heads h ON h.n = x.head
     ORDER BY x.n`,
    [
      collection,
      heads.map((h) => h.title),
      heads.map((h) => h.path),
      heads.map((h) => wordsOf(h.title)),
      heads.map((h) => wordsOf(h.path)),
      chunks.map((c) => c.id),
      chunks.map((c) => c.index),
      chunks.map((c) => c.head),
      chunks.map((c) => c.body),
      chunks.map((c) => wordsOf(c.body)),
      chunks.map((c) => c.page),
      chunks.map((c) => c.location),
      chunks.map((c) => c.scanned),
    ],
  );
}

function nullIfNaN(n: number): number | null {
  return Number.isNaN(n) ? null : n;
}
