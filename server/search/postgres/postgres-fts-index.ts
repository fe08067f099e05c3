import crypto from "node:crypto";
import DataLoader from "dataloader";
import type { DataSource, QueryRunner } from "typeorm";
import { NotFoundError } from "../../errors";
import type { ChunkInput, ChunkKey, CollectionStats, DocumentHeader, DocumentInput, DocumentSummary, IndexedState, SearchHit, SearchIndex, SearchOptions, StagedDocument } from "../search-index";
import { stagedDocument } from "../staged-document";
import { MARK_CLOSE, MARK_OPEN, UUID, clampTopK, clean, folderPrefix, markSnippet, matchAttempts, parseQuery, type MatchAttempt, type QueryUnit } from "../query";
import { toSummary, type DocumentRow } from "../document-row";
import { SearchStatistics } from "./postgres-statistics";
import { SpanEstimates } from "./span-estimates";

/**
 * The collection index on PostgreSQL full-text search, in the team server's own database:
 * - `search_documents`: one row per (collection_id, source_id, path).
 * - `search_chunks`: one row per chunk with a stored `tsvector` (title weight A, path B,
 *   body C) under a GIN index, ranked with ts_rank; snippets by ts_headline.
 * - the text search configuration `sluice_search`: unaccent, then the English Snowball
 *   stemmer without a stop-word list, so "cafe" finds "café", "run" finds "running" and
 *   "and" is a word like any other, as with the SQLite engine's porter + remove_diacritics.
 * - `tsv_exact` (since schema 2): the same text under `sluice_exact` (unaccent, no stemming)
 *   under its own GIN index: chunks with the query's words in the very form typed rank first,
 *   so a file is found by its own rare words even when their stem is common.
 * The tables are created on first use (versioned in `search_schema`), like the SQLite engine's
 * files; an older version is upgraded in place (2 adds `tsv_exact`, computed for every row;
 * 3 makes both tsvectors plain columns written by the INSERT and keeps them in the row; 4 adds a
 * BRIN index on `id`, from which a ranking reads the id range of the collection's newest chunks;
 * 5 maps all-ASCII words past unaccent, which has nothing to change in them).
 *
 * Ranking reads every candidate's `tsv`, so the tsvectors stay in the heap row, uncompressed
 * (STORAGE MAIN under a 4 KB `toast_tuple_target`; the body goes to TOAST instead): a candidate
 * is one buffer, not a TOAST index lookup and several chunks per tsvector (12x fewer buffers).
 * The INSERT computes them from text the engine has already turned into words (SEPARATORS to
 * spaces in JS: PostgreSQL's translate() was half the cost of a row), the title and path once
 * per document.
 */

const SCHEMA_VERSION = 5;
/** The BRIN index on search_chunks(id) (schema 4): how a span's id range is read. */
const ID_RANGES = "search_chunks_id_brin";
const CONFIG = "sluice_search";
/** Words as typed (unaccented, lower case, no stemming): which chunks have the query's words in the very form typed. */
const EXACT_CONFIG = "sluice_exact";
/** Any fixed key: serializes schema creation between processes starting together. */
const SCHEMA_LOCK_KEY = 0x51c4;

/** Creates the text search configuration: with unaccent when the extension can be had, else without (no accent folding). */
async function createConfig(q: QueryRunner): Promise<void> {
  await q.query(`CREATE TEXT SEARCH DICTIONARY sluice_stem (TEMPLATE = snowball, Language = english)`);
  await q.query(`CREATE TEXT SEARCH CONFIGURATION ${CONFIG} (COPY = english)`);
  let unaccent = false;
  await q.query("SAVEPOINT unaccent");
  try {
    await q.query("CREATE EXTENSION IF NOT EXISTS unaccent");
    await q.query("RELEASE SAVEPOINT unaccent");
    unaccent = true;
  } catch {
    await q.query("ROLLBACK TO SAVEPOINT unaccent");
  }
  await q.query(`ALTER TEXT SEARCH CONFIGURATION ${CONFIG} ALTER MAPPING FOR ${WORD_TYPES} WITH ${unaccent ? "unaccent, " : ""}sluice_stem`);
}

/** The parser's token types that are words (the rest, e.g. blanks, are dropped by both configurations). */
const WORD_TYPES = "asciiword, asciihword, hword_asciipart, word, hword, hword_part, numword, numhword, hword_numpart";
/**
 * The word types whose every letter is ASCII (schema 5): unaccent has no rule for an ASCII
 * character, so it hands such a word on unchanged, after a lookup per character; these go
 * straight to the stemmer (or `simple`). Same lexemes, ~10 % less database time per INSERT.
 */
const ASCII_WORD_TYPES = "asciiword, asciihword, hword_asciipart";

/**
 * Punctuation the PostgreSQL parser builds tokens from (tags, e-mail addresses, URLs, hosts,
 * file paths, entities): indexed as spaces, so the words inside are words, as SQLite's
 * unicode61 tokenizer sees them. Single ASCII characters to single spaces, so offsets hold.
 */
const SEPARATORS = "<>&@/\\:.~_=?#%+";
const SPACES = " ".repeat(SEPARATORS.length);
const words = (column: string) => `translate(${column}, '${SEPARATORS}', '${SPACES}')`;
/** Which UTF-16 code units are SEPARATORS (all ASCII). */
const IS_SEPARATOR = new Uint8Array(128);
for (const c of SEPARATORS) IS_SEPARATOR[c.charCodeAt(0)] = 1;
const SPACE = 0x20;

/**
 * `words()` in JS, for text about to be indexed: the same characters to spaces, so offsets hold.
 * On a team server this runs on the API's thread for every chunk of a batch, so it is a loop
 * over the text's UTF-16 units rather than a global regex replace: real text is dense in
 * separators (paths, URLs, markup, sentence dots), and the replace, which builds the result
 * match by match, took 30-70 µs a chunk (120-290 ms for a 4,000-chunk batch of the real
 * corpus, all of it one turn of the event loop); this takes a quarter to an eighth of that.
 */
export function wordsOf(text: string): string {
  const bytes = Buffer.from(text, "utf16le");
  // Node's pool hands out 8-byte-aligned slices, so the view below fits; copy if one ever is not.
  const units = bytes.byteOffset % 2 === 0 ? new Uint16Array(bytes.buffer, bytes.byteOffset, bytes.length / 2) : new Uint16Array(Uint8Array.from(bytes).buffer);
  for (let i = 0; i < units.length; i++) {
    const unit = units[i];
    if (unit < 128 && IS_SEPARATOR[unit] === 1) units[i] = SPACE;
  }
  return Buffer.from(units.buffer, units.byteOffset, units.byteLength).toString("utf16le");
}

const MIGRATIONS: Record<number, (q: QueryRunner) => Promise<void>> = {
  1: async (q) => {
    await createConfig(q);
    await q.query(`CREATE TABLE search_documents (
      id varchar PRIMARY KEY,
      collection_id varchar NOT NULL,
      source_id varchar NOT NULL,
      path text NOT NULL,
      title text NOT NULL,
      size bigint NOT NULL,
      modified_at bigint NOT NULL,
      version text,
      chunk_count integer NOT NULL,
      indexed_at bigint NOT NULL,
      UNIQUE (collection_id, source_id, path)
    )`);
    await q.query(`CREATE INDEX search_documents_path ON search_documents (collection_id, path COLLATE "C", source_id)`);
    await q.query(`CREATE TABLE search_chunks (
      id bigserial PRIMARY KEY,
      collection_id varchar NOT NULL,
      document_id varchar NOT NULL REFERENCES search_documents(id) ON DELETE CASCADE,
      chunk_index integer NOT NULL,
      title text NOT NULL,
      path text NOT NULL,
      body text NOT NULL,
      tsv tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('${CONFIG}'::regconfig, ${words("title")}), 'A') ||
        setweight(to_tsvector('${CONFIG}'::regconfig, ${words("path")}), 'B') ||
        setweight(to_tsvector('${CONFIG}'::regconfig, ${words("body")}), 'C')
      ) STORED,
      UNIQUE (document_id, chunk_index)
    )`);
    await q.query(`CREATE INDEX search_chunks_tsv ON search_chunks USING gin (tsv)`);
    await q.query(`CREATE INDEX search_chunks_collection ON search_chunks (collection_id, id)`);
  },
  2: async (q) => {
    const [{ unaccent }] = (await q.query("SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'unaccent') AS unaccent")) as { unaccent: boolean }[];
    await q.query(`CREATE TEXT SEARCH CONFIGURATION ${EXACT_CONFIG} (COPY = simple)`);
    await q.query(`ALTER TEXT SEARCH CONFIGURATION ${EXACT_CONFIG} ALTER MAPPING FOR ${WORD_TYPES} WITH ${unaccent ? "unaccent, " : ""}simple`);
    await q.query(`ALTER TABLE search_chunks ADD COLUMN tsv_exact tsvector GENERATED ALWAYS AS (
      to_tsvector('${EXACT_CONFIG}'::regconfig, ${words("title")} || ' ' || ${words("path")} || ' ' || ${words("body")})
    ) STORED`);
    await q.query(`CREATE INDEX search_chunks_tsv_exact ON search_chunks USING gin (tsv_exact)`);
  },
  3: async (q) => {
    // Existing rows keep their values (and their storage until they are written again).
    await q.query(`ALTER TABLE search_chunks ALTER COLUMN tsv DROP EXPRESSION, ALTER COLUMN tsv_exact DROP EXPRESSION`);
    await q.query(`ALTER TABLE search_chunks ALTER COLUMN tsv SET STORAGE MAIN, ALTER COLUMN tsv_exact SET STORAGE MAIN`);
    await q.query(`ALTER TABLE search_chunks SET (toast_tuple_target = 4080)`);
  },
  4: async (q) => {
    // A span's id range as block ranges (rows go in in id order, so ranges of ids are ranges of
    // pages): a few hundred index entries per million chunks instead of a primary-key bitmap of one
    // entry per chunk. Built from the table in one pass (~8.5 s at 1,000,000 chunks; writes wait,
    // searches do not); new pages are summarized as autovacuum gets to them, and until then every
    // span includes them, which costs only for spans that do not reach the newest pages.
    await q.query(`CREATE INDEX ${ID_RANGES} ON search_chunks USING brin (id) WITH (autosummarize = on)`);
  },
  5: async (q) => {
    // No row changes: the lexemes are the same (docs/decisions.md, "PostgreSQL: ASCII words skip unaccent").
    await q.query(`ALTER TEXT SEARCH CONFIGURATION ${CONFIG} ALTER MAPPING FOR ${ASCII_WORD_TYPES} WITH sluice_stem`);
    await q.query(`ALTER TEXT SEARCH CONFIGURATION ${EXACT_CONFIG} ALTER MAPPING FOR ${ASCII_WORD_TYPES} WITH simple`);
  },
};

/** Weights for {D, C, B, A}: title (A) 5 : path (B) 2 : body (C) 1, as the SQLite engine's bm25 weights. */
const WEIGHTS = "'{0.1, 0.2, 0.4, 1.0}'";
/**
 * Past this many matches only the most recently indexed are ranked. Each costs a row read and a
 * ts_rank (ts_rank_cd was 5x dearer on multi-word queries): a common word costs this many.
 * (The SQLite engine has its own window, RANKING_LIMITS.)
 */
const RANK_WINDOW = 2_000;
/**
 * When the window is read from the GIN index's matches among the collection's newest chunks
 * (see windowSpans): only past this many estimated matches (fewer are read whole, by the GIN
 * index), and only when a match is rarer than one chunk in this many (the walk newest first
 * reads that many chunks per match, each a heap page visit of its own; a span costs ~1.25 rows
 * read per match plus two index range scans). SPAN_MARGIN: the span holds this many times the
 * window by the estimate, so an underestimate rarely leaves the walk to finish the window.
 */
const SPAN_MIN_MATCHES = 2 * RANK_WINDOW;
const SPAN_MIN_CHUNKS_PER_MATCH = 4;
const SPAN_MARGIN = 1.25;
/**
 * A search's chunks: the collection's ($1), and they newest first. Written as `= ANY` of one
 * value rather than `=` so the planner keeps collection_id in the ORDER BY (an `=` makes it a
 * constant it drops, leaving `ORDER BY id DESC`): then only search_chunks_collection
 * (collection_id, id) reads the walk in that order, never the primary key. Once the tables have
 * statistics the planner took the primary key backwards, filtering on the collection, as it
 * assumes the collection's chunks are spread evenly among the others'; but a collection's chunks
 * come in runs, and the first of four collections ingested into the same tables was reached
 * only after the 78,000 newer chunks of the other three (200-500 ms, 6 % of the bench's
 * searches; docs/decisions.md). Same estimates as `=` (one value's frequency).
 */
const IN_COLLECTION = "c.collection_id = ANY(ARRAY[$1]::varchar[])";
const NEWEST_FIRST = "c.collection_id DESC, c.id DESC";
/** A node of EXPLAIN (FORMAT JSON)'s plan: its estimated rows and its children. */
interface PlanNode {
  "Plan Rows": number;
  Plans?: PlanNode[];
}
/** 64 MB: about 20,000 chunks' entries per index (a 2,000-file share), one fold each; see INDEX_WRITE. */
const GIN_PENDING_LIST_KB = 64 * 1024;
/**
 * Index writes commit without waiting for their WAL to reach disk: the index is rebuilt from the
 * sources, a crash can lose only the last moments of writes (the documents then read as not
 * indexed and the next run indexes them), and any later synchronous commit, such as the job's
 * end, flushes them first. And their GIN entries wait in the indexes' pending lists up to
 * GIN_PENDING_LIST_KB (PostgreSQL's default is 4 MB) before a write folds them in, so a job
 * folds each index a few times rather than every few hundred chunks; settleWrites() folds the
 * rest when the job ends. See docs/decisions.md.
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
/** The GIN indexes of search_chunks, whose pending lists settleWrites() folds in. */
const GIN_INDEXES = ["search_chunks_tsv", "search_chunks_tsv_exact"];
/** SQLSTATE 42501: not the owner of the index. */
const INSUFFICIENT_PRIVILEGE = "42501";
/** A token PostgreSQL's parser keeps as one word (letters, or letters and digits). */
const PLAIN_WORD = /^[\p{L}\p{N}]+$/u;
const HEADLINE = `StartSel=${MARK_OPEN}, StopSel=${MARK_CLOSE}, HighlightAll=true`;
const SNIPPET_WORDS = 20;
// PostgreSQL text cannot hold NUL; indexed text drops it (and the snippet sentinels).
// biome-ignore lint/suspicious/noControlCharactersInRegex: this pattern finds NUL to drop it
const NUL = /\u0000/g;


/**
 * A prefix attempt's other units drive its index lookup (TsquerySplit) when their estimated
 * matches times this are fewer than the prefix's: checking the prefix on a row cost 2-3 µs,
 * collecting one of the prefix's index entries ~0.11 µs (1,000,000 chunks in memory; a row read
 * from disk would cost more, an entry not). docs/decisions.md.
 */
const PREFIX_DRIVE_ROW_COST = 25;

/** Below this many chunks written, a table without statistics costs searches little (see SearchStatistics). */
const ANALYZE_FLOOR = RANK_WINDOW;

export interface PostgresFtsIndexOptions {
  /** Where a failed background ANALYZE is reported. */
  logger?: { warn(message: string): void };
  /** Chunks written before the first ANALYZE of a table never analyzed (tests lower it). */
  analyzeFloor?: number;
  /** How long the writes must pause before a due ANALYZE runs (tests change it). */
  analyzeQuietMs?: number;
}

export class PostgresFtsIndex implements SearchIndex {
  private schema: Promise<void> | null = null;
  private readonly statistics: SearchStatistics;
  private readonly spanEstimates = new SpanEstimates(SPAN_MIN_MATCHES * SPAN_MIN_CHUNKS_PER_MATCH);
  /**
   * Counts asked in the same turn of the event loop (a listing's, Promise.all over its
   * collections) load together in one statement instead of one pooled round trip each; no cache,
   * since counts change as jobs write.
   */
  private readonly statsLoader = new DataLoader<string, CollectionStats>(
    async (keys) => {
      const stats = await this.statsOf([...new Set(keys)]);
      return keys.map((key) => stats.get(key)!);
    },
    { cache: false },
  );

  constructor(
    private readonly db: DataSource,
    options: PostgresFtsIndexOptions = {},
  ) {
    this.statistics = new SearchStatistics(db, {
      floor: options.analyzeFloor ?? ANALYZE_FLOOR,
      quietMs: options.analyzeQuietMs,
      onError: (error) => options.logger?.warn(`refreshing the search tables' statistics failed (searches may be slower until it works): ${(error as Error).message}`),
    });
  }

  /** Runs a due ANALYZE at once, and resolves when none is under way. */
  statisticsSettled(): Promise<void> {
    return this.statistics.settled();
  }

  async upsertDocument(collectionId: string, doc: DocumentInput): Promise<string> {
    return (await this.upsertDocuments(collectionId, [doc]))[0];
  }

  /** One transaction for the batch; a document's old version goes only when its new one is in (the transaction makes it all or none). */
  async upsertDocuments(collectionId: string, docs: DocumentInput[]): Promise<string[]> {
    const collection = collectionKey(collectionId);
    if (docs.length === 0) return [];
    await this.ready();
    const ids = docs.map(() => crypto.randomUUID());
    const keys = new Set(docs.map((d) => `${d.sourceId}\u0000${d.path}`));
    // Three statements per batch, however many documents; a batch naming one path twice
    // (never from ingestion) goes document by document so the later one wins.
    const groups = keys.size === docs.length ? [docs.map((doc, i) => ({ doc, id: ids[i] }))] : docs.map((doc, i) => [{ doc, id: ids[i] }]);
    await this.inTransaction(async (q) => {
      await q.query(INDEX_WRITE);
      for (const group of groups) await writeDocuments(q, collection, group);
    });
    this.statistics.noteWritten(docs.reduce((sum, d) => sum + d.chunks.length, 0));
    return ids;
  }

  /**
   * One transaction from start to commit, on a connection of its own: the old version goes and
   * the new one comes in at once for every other reader, and a process that dies mid-way
   * leaves nothing (PostgreSQL rolls the transaction back).
   */
  async stageDocument(collectionId: string, doc: DocumentHeader): Promise<StagedDocument> {
    const collection = collectionKey(collectionId);
    await this.ready();
    const q = this.db.createQueryRunner();
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
      add: (documentId, chunks) => insertChunks(q, collection, [{ title, path }], chunks.map((c) => ({ id: documentId, index: c.chunkIndex, head: 1, body: pgText(c.text) }))),
      commit: async (documentId, chunkCount) => {
        await q.query("UPDATE search_documents SET chunk_count = $2, indexed_at = $3 WHERE id = $1", [documentId, chunkCount, Date.now()]);
        await end("commitTransaction");
        this.statistics.noteWritten(chunkCount);
      },
      discard: () => end("rollbackTransaction"),
    });
  }

  /** Nothing to do: a staged document is one transaction, rolled back if its process dies. */
  async removeUnfinished(collectionId: string): Promise<void> {
    collectionKey(collectionId);
  }

  /**
   * Folds both GIN indexes' pending lists into their trees, one connection each (they are
   * independent), so searches no longer scan them entry by entry. Only the tables' owner may
   * (the role that created them, normally this one); for any other, autovacuum does it later,
   * which is no error: the pending entries are searchable either way.
   */
  async settleWrites(): Promise<void> {
    await this.ready();
    await Promise.all(
      GIN_INDEXES.map((name) =>
        this.db.query("SELECT gin_clean_pending_list($1::regclass)", [name]).catch((error: unknown) => {
          if ((error as { code?: string }).code !== INSUFFICIENT_PRIVILEGE) throw error;
        }),
      ),
    );
  }

  async removeDocuments(collectionId: string, sourceId: string, paths: string[]): Promise<void> {
    const collection = collectionKey(collectionId);
    if (paths.length === 0) return;
    await this.ready();
    await this.db.query("DELETE FROM search_documents WHERE collection_id = $1 AND source_id = $2 AND path = ANY($3::text[])", [
      collection,
      sourceId,
      paths.map(pgText),
    ]);
    this.statistics.noteWritten(paths.length);
  }

  async indexedState(collectionId: string, sourceId: string): Promise<Map<string, IndexedState>> {
    const collection = collectionKey(collectionId);
    await this.ready();
    const rows = (await this.db.query("SELECT path, size, modified_at, version FROM search_documents WHERE collection_id = $1 AND source_id = $2", [
      collection,
      sourceId,
    ])) as Pick<DocumentRow, "path" | "size" | "modified_at" | "version">[];
    const state = new Map<string, IndexedState>();
    for (const row of rows) state.set(row.path, { size: row.size, modifiedAt: new Date(row.modified_at), version: row.version });
    return state;
  }

  async listDocuments(collectionId: string, offset: number, limit: number): Promise<{ total: number; items: DocumentSummary[] }> {
    const collection = collectionKey(collectionId);
    await this.ready();
    const [{ total }] = (await this.db.query("SELECT count(*) AS total FROM search_documents WHERE collection_id = $1", [collection])) as { total: number }[];
    // COLLATE "C": byte order, as SQLite sorts, whatever the database's locale.
    const rows = (await this.db.query(
      `SELECT * FROM search_documents WHERE collection_id = $1 ORDER BY path COLLATE "C", source_id COLLATE "C" LIMIT $2 OFFSET $3`,
      [collection, Math.max(0, Math.floor(limit)), Math.max(0, Math.floor(offset))],
    )) as DocumentRow[];
    return { total, items: rows.map(toSummary) };
  }

  async stats(collectionId: string): Promise<CollectionStats> {
    const collection = collectionKey(collectionId);
    await this.ready();
    return this.statsLoader.load(collection);
  }

  /** Every collection's counts asked in one turn (a listing's), in one statement. */
  private async statsOf(collections: string[]): Promise<Map<string, CollectionStats>> {
    const rows = (await this.db.query(
      `SELECT collection_id, count(*) AS documents, coalesce(sum(chunk_count), 0)::bigint AS chunks
       FROM search_documents WHERE collection_id = ANY($1::varchar[]) GROUP BY collection_id`,
      [collections],
    )) as { collection_id: string; documents: number; chunks: number }[];
    const found = new Map(rows.map((row) => [row.collection_id, row]));
    // PostgreSQL looks after its own storage: a collection here is never "damaged" in our sense.
    return new Map(
      collections.map((id) => [id, { documentCount: Number(found.get(id)?.documents ?? 0), chunkCount: Number(found.get(id)?.chunks ?? 0), indexStatus: "ok" as const }]),
    );
  }

  async search(collectionId: string, query: string, topK: number, filter: SearchOptions = {}): Promise<SearchHit[]> {
    const collection = collectionKey(collectionId);
    const units = parseQuery(query);
    if (units.length === 0) return [];
    await this.ready();
    const limit = clampTopK(topK);
    const phraseLength = Math.max(...units.map((u) => u.tokens.length));
    for (const attempt of matchAttempts(units)) {
      const stemmed = toTsquery(units, attempt, CONFIG);
      // Words typed exactly are there stemmed too, so the exact tier asks only for them (the planner
      // would take the two conditions as independent and misjudge how many chunks match); a
      // phrase, a prefix or a token the parser may split into a phrase is not implied.
      const impliesStemmed = !attempt.prefix && units.every((u) => u.tokens.length === 1 && PLAIN_WORD.test(u.tokens[0]));
      const rows = await this.ranked(collection, stemmed, { tsquery: toTsquery(units, attempt, EXACT_CONFIG), impliesStemmed }, filter, limit);
      if (rows.length === 0) continue;
      return rows.map((row) => ({
        documentId: row.document_id,
        sourceId: row.source_id,
        path: row.path,
        title: row.title,
        chunkIndex: row.chunk_index,
        snippet: markSnippet(joinMarks(snippetWindow(restore(row.snippet ?? "", row.body)), phraseLength)),
        text: row.body,
        score: Number(row.score),
        exact: row.exact,
        matched: attempt.matched,
      }));
    }
    return [];
  }

  async documentChunks(collectionId: string, documentId: string): Promise<ChunkInput[]> {
    await this.ready();
    const rows = (await this.db.query(
      "SELECT chunk_index, body FROM search_chunks WHERE collection_id = $1 AND document_id = $2 ORDER BY chunk_index",
      [collectionId, documentId],
    )) as { chunk_index: number; body: string }[];
    return rows.map((r) => ({ chunkIndex: r.chunk_index, text: r.body }));
  }

  async chunkTexts(collectionId: string, chunks: ChunkKey[]): Promise<Array<string | null>> {
    if (chunks.length === 0) return [];
    await this.ready();
    const rows = (await this.db.query(
      `SELECT k.n, c.body FROM unnest($2::varchar[], $3::int[]) WITH ORDINALITY AS k(document_id, chunk_index, n)
       JOIN search_chunks c ON c.document_id = k.document_id AND c.chunk_index = k.chunk_index AND c.collection_id = $1`,
      [collectionId, chunks.map((c) => c.documentId), chunks.map((c) => c.chunkIndex)],
    )) as { n: string; body: string }[];
    const texts: Array<string | null> = chunks.map(() => null);
    for (const row of rows) texts[Number(row.n) - 1] = row.body;
    return texts;
  }

  /**
   * The best chunks for a stemmed tsquery, in one statement: first the exact tier (chunks that
   * match `exact` on `tsv_exact` too; when that implies the stemmed match, only that is asked),
   * then, when it has fewer than `limit`, the stemmed tier without the exact tier's chunks; each
   * tier ranks at most its RANK_WINDOW most recently indexed matches; at most
   * `filter.perDocument` chunks of a document over both; snippets (ts_headline, the dearest
   * part per row) only for the chunks answered.
   *
   * The tsqueries are written into each clause rather than taken from a CTE, so the planner
   * sees them as constants and estimates their matches from the columns' statistics: a rare
   * word is looked up in the GIN index (reading each match), a common one walks the
   * collection's chunks newest first until RANK_WINDOW match.
   */
  private async ranked(collection: string, stemmed: Tsquery, exact: ExactMatch, filter: SearchOptions, limit: number) {
    // The query is built from placeholders only: user text reaches PostgreSQL as parameters.
    const params: unknown[] = [collection];
    const param = (value: unknown) => `$${params.push(value)}`;
    const q = stemmed.sql(param);
    const filters: string[] = [];
    if (filter.types?.length) filters.push(`lower(d.path) LIKE ANY(${param(filter.types.map((type) => `%.${type}`))}::text[])`);
    if (filter.folder) filters.push(`starts_with(d.path, ${param(folderPrefix(filter.folder))})`);
    const from = `search_chunks c${filters.length ? " JOIN search_documents d ON d.id = c.document_id" : ""}`;
    // Filtered searches take no span (the join), but a prefix's drive pays off for them as well.
    const estimates = filters.length && !stemmed.split ? null : await this.windowSpans(collection, stemmed, exact);
    const spans = filters.length ? null : estimates;
    const drives = estimates?.drive ? { stemmed: stemmed.split!.others, exact: exact.tsquery.split!.others } : null;
    const window = param(RANK_WINDOW);
    const top = param(limit);
    const perDocument = filter.perDocument === undefined ? null : param(filter.perDocument);
    // A hard cap leaves nothing to spread.
    const firstPerDocument = perDocument !== null || filter.firstPerDocument === undefined ? null : param(filter.firstPerDocument);
    // Ordered by `later` only where there is one to order by: the other statements stay as they were.
    const later = firstPerDocument === null ? "" : "later, ";
    /** One tier's CTEs, ending in `<name>_top`: its best `limitSql` chunks (id, score, document_id, later: past its document's firstPerDocument). */
    const tier = (name: string, tierExact: ExactMatch | null, extra: string, span: number | null, limitSql: string) => {
      const where = [...chunkConditions(param, () => q, tierExact, drives), ...filters, ...(extra ? [extra] : [])].join(" AND ");
      // Ranked as they are read, so only ids and scores are sorted (a sort of the tsvectors spilled to disk).
      const rankedRows = (bound: string) => `SELECT c.id, ts_rank(${WEIGHTS}, c.tsv, ${q}) AS score, c.document_id FROM ${from} WHERE ${where}${bound}`;
      const ranked =
        span === null
          ? `${name}_ranked AS (${rankedRows("")} ORDER BY ${NEWEST_FIRST} LIMIT ${window})`
          : // The newest RANK_WINDOW matches, in up to three parts: those among the collection's newest
            // `span` chunks (the GIN index's matches ANDed with that id range: only they are read);
            // if those were fewer but some, a second, wider span below it, sized by the matches the
            // first found per id (x SPAN_MARGIN) to hold the rest (a short first span used to read
            // every older match by bitmap, up to ~8,800 rows at 1,000,000 chunks for the ~300 missing);
            // then, if still fewer, the newest of the rest (the walk, which then starts at the bound).
            // The bound is where the newest `span` chunks start, reckoned from the collection's newest
            // and oldest ids and its estimated chunks (ids spread evenly over that range): two index
            // probes. Counting the span's entries in the index (an OFFSET) read up to ~600,000 of them
            // at 1,000,000 chunks (650 ms). A bound off the mark costs speed, never rows: the near part
            // reads more matches, or the walk completes the window.
            `${name}_bound AS MATERIALIZED (
               SELECT newest.id - ceil(${param(span)} * (newest.id - oldest.id + 1)::float8 / ${param(Math.max(1, spans!.chunks))})::bigint AS id, newest.id AS newest
               FROM (SELECT c.id FROM search_chunks c WHERE ${IN_COLLECTION} ORDER BY ${NEWEST_FIRST} LIMIT 1) newest,
                    (SELECT c.id FROM search_chunks c WHERE ${IN_COLLECTION} ORDER BY c.collection_id, c.id LIMIT 1) oldest
             ),
             ${name}_near AS MATERIALIZED (${rankedRows(` AND c.id > (SELECT id FROM ${name}_bound)`)} ORDER BY c.id + 0 DESC LIMIT ${window}),
             ${name}_wider AS MATERIALIZED (
               SELECT b.id - ceil(${SPAN_MARGIN} * (b.newest - b.id) * (${window} - n.found)::float8 / nullif(n.found, 0))::bigint AS id, ${window} - n.found AS missing
               FROM ${name}_bound b, (SELECT count(*) AS found FROM ${name}_near) n
             ),
             ${name}_far AS MATERIALIZED (${rankedRows(
               ` AND c.id <= (SELECT id FROM ${name}_bound) AND c.id > (SELECT id FROM ${name}_wider WHERE missing > 0)`,
             )} ORDER BY c.id + 0 DESC LIMIT (SELECT missing FROM ${name}_wider)),
             ${name}_ranked AS (
               SELECT * FROM ${name}_near
               UNION ALL
               SELECT * FROM ${name}_far
               UNION ALL
               (${rankedRows(` AND c.id <= coalesce((SELECT id FROM ${name}_wider WHERE missing > 0), (SELECT id FROM ${name}_bound))`)} ORDER BY ${NEWEST_FIRST} LIMIT (SELECT missing FROM ${name}_wider) - (SELECT count(*) FROM ${name}_far))
             )`;
      const numbered = `SELECT id, score, document_id, row_number() OVER (PARTITION BY document_id ORDER BY score DESC, id) AS n FROM ${name}_ranked`;
      const best =
        perDocument !== null
          ? // At most perDocument chunks of each document, so one long document cannot fill the page.
            `SELECT id, score, document_id, false AS later FROM (${numbered}) r WHERE n <= ${perDocument}`
          : firstPerDocument !== null
            ? // A document's chunks past firstPerDocument after every other document's, none dropped.
              `SELECT id, score, document_id, n > ${firstPerDocument} AS later FROM (${numbered}) r`
            : `SELECT id, score, document_id, false AS later FROM ${name}_ranked`;
      return `${ranked},
       ${name}_top AS (${best} ORDER BY ${later}score DESC, id LIMIT ${limitSql})`;
    };
    // The stemmed tier runs only when the exact tier did not fill the page (a LIMIT of 0 reads
    // nothing); it then takes `limit` chunks of its own, as the page's per-document cap may drop some.
    const restLimit = `(SELECT CASE WHEN count(*) < ${top} THEN ${top} ELSE 0 END FROM exact_top)`;
    const answered =
      perDocument === null
        ? `SELECT * FROM tiers`
        : `SELECT * FROM (SELECT *, row_number() OVER (PARTITION BY document_id ORDER BY exact DESC, score DESC, id) AS n FROM tiers) t WHERE n <= ${perDocument}`;
    return (await this.db.query(
      `WITH ${tier("exact", exact, "", spans?.exact ?? null, top)},
       ${tier("rest", null, "c.id NOT IN (SELECT id FROM exact_top)", spans?.stemmed ?? null, restLimit)},
       tiers AS (
         SELECT id, score, document_id, later, true AS exact FROM exact_top
         UNION ALL
         SELECT id, score, document_id, later, false AS exact FROM rest_top
       ),
       page AS (${answered} ORDER BY exact DESC, ${later}score DESC, id LIMIT ${top})
       SELECT page.id, c.document_id, c.chunk_index, d.source_id, d.path, d.title, page.score, page.exact, c.body,
              ts_headline('${CONFIG}', ${words("c.body")}, ${q}, '${HEADLINE}') AS snippet
       FROM page JOIN search_chunks c ON c.id = page.id JOIN search_documents d ON d.id = c.document_id
       ORDER BY page.exact DESC, ${later && "page.later, "}page.score DESC, page.id`,
      params,
    )) as { id: string; document_id: string; chunk_index: number; source_id: string; path: string; title: string; score: number; exact: boolean; body: string; snippet: string | null }[];
  }

  /**
   * For each tier, how many of the collection's newest chunks should hold RANK_WINDOW matches,
   * from the planner's estimates of the matches and of the collection's chunks; null when
   * walking the chunks newest first is as cheap (a common word: few chunks read per match) or
   * the GIN index's matches are few enough to read them all (a rare word). Only a cost: the
   * window's rows are the same either way (a span that holds too few is completed by the walk).
   * For a prefix attempt of several units (`stemmed.split`), also whether to look up the other
   * units in the GIN index rather than the prefix (`drive`, see TsquerySplit).
   * One EXPLAIN for both tiers, its answer kept a while (SpanEstimates), and none at all for a
   * collection too small for a span.
   */
  private async windowSpans(
    collection: string,
    stemmed: Tsquery,
    exact: ExactMatch,
  ): Promise<{ exact: number | null; stemmed: number | null; chunks: number; drive: boolean } | null> {
    if (this.spanEstimates.tooSmall(collection)) return null;
    const params: unknown[] = [collection];
    const param = (value: unknown) => `$${params.push(value)}`;
    const exactWhere = chunkConditions(param, () => stemmed.sql(param), exact, null).join(" AND ");
    const stemmedWhere = chunkConditions(param, () => stemmed.sql(param), null, null).join(" AND ");
    const split = stemmed.split;
    const splitPlans = split
      ? ` UNION ALL SELECT 1 FROM search_chunks c WHERE ${IN_COLLECTION} AND c.tsv @@ (${split.others.sql(param)})` +
        ` UNION ALL SELECT 1 FROM search_chunks c WHERE ${IN_COLLECTION} AND c.tsv @@ (${split.prefix.sql(param)})`
      : "";
    const sql = `EXPLAIN (FORMAT JSON) SELECT 1 FROM search_chunks c WHERE ${exactWhere} UNION ALL SELECT 1 FROM search_chunks c WHERE ${stemmedWhere} UNION ALL SELECT 1 FROM search_chunks WHERE collection_id = $1${splitPlans}`;
    const key = JSON.stringify([sql, params]);
    let estimate = this.spanEstimates.get(key);
    if (!estimate) {
      const [{ "QUERY PLAN": plan }] = (await this.db.query(sql, params)) as { "QUERY PLAN": { Plan: PlanNode }[] }[];
      const [exactMatches, stemmedMatches, chunks, othersMatches, prefixMatches] = (plan[0].Plan.Plans ?? []).map((p) => p["Plan Rows"]);
      // The other units drive the lookup when the prefix's entries are expected to cost more than checking the prefix on each of their rows.
      estimate = { exactMatches, stemmedMatches, chunks, drive: split !== null && othersMatches * PREFIX_DRIVE_ROW_COST < prefixMatches };
      this.spanEstimates.set(collection, key, estimate);
    }
    return {
      exact: windowSpan(estimate.exactMatches, estimate.chunks),
      stemmed: windowSpan(estimate.stemmedMatches, estimate.chunks),
      chunks: estimate.chunks,
      drive: estimate.drive,
    };
  }

  async drop(collectionId: string): Promise<void> {
    const collection = collectionKey(collectionId);
    await this.ready();
    await this.inTransaction(async (q) => {
      await q.query("DELETE FROM search_chunks WHERE collection_id = $1", [collection]);
      await q.query("DELETE FROM search_documents WHERE collection_id = $1", [collection]);
    });
  }

  /** Nothing to set aside: the index lives in the team's database. */
  async moveAside(): Promise<string | null> {
    return null;
  }

  /** The pool belongs to the data source, which the server closes after the index: a background ANALYZE ends first. */
  async close(): Promise<void> {
    await this.statistics.stop();
  }

  private ready(): Promise<void> {
    this.schema ??= this.migrate()
      .then(() => this.statistics.start())
      .catch((error) => {
        this.schema = null;
        throw error;
      });
    return this.schema;
  }

  private async migrate(): Promise<void> {
    await this.inTransaction(async (q) => {
      await q.query("SELECT pg_advisory_xact_lock($1)", [SCHEMA_LOCK_KEY]);
      await q.query("CREATE TABLE IF NOT EXISTS search_schema (version integer NOT NULL)");
      const rows = (await q.query("SELECT version FROM search_schema")) as { version: number }[];
      const current = rows[0]?.version ?? 0;
      if (current > SCHEMA_VERSION) throw new Error(`The search tables have schema version ${current}, newer than this build (${SCHEMA_VERSION})`);
      for (let version = current + 1; version <= SCHEMA_VERSION; version++) await MIGRATIONS[version](q);
      if (rows.length === 0) await q.query("INSERT INTO search_schema (version) VALUES ($1)", [SCHEMA_VERSION]);
      else await q.query("UPDATE search_schema SET version = $1", [SCHEMA_VERSION]);
    });
  }

  private async inTransaction(work: (q: QueryRunner) => Promise<void>): Promise<void> {
    const q = this.db.createQueryRunner();
    try {
      await q.connect();
      await q.startTransaction();
      try {
        await work(q);
        await q.commitTransaction();
      } catch (error) {
        await q.rollbackTransaction();
        throw error;
      }
    } finally {
      await q.release();
    }
  }
}

/**
 * How many of a collection's newest chunks to read a tier's window from, for the planner's
 * estimates of its matches and of the collection's chunks; null when reading all matches (few)
 * or walking the chunks newest first (a common word) costs less (see windowSpans).
 *
 * A span's own cost is small beside the rows it spares: its id range is read from the BRIN index
 * (ID_RANGES, schema 4) as block ranges, ~8 ms for half of a 1,000,000-chunk collection (the
 * primary-key bitmap before it: 57 ms, so spans were taken only from ~11,000 estimated matches
 * there, and every word outside the statistics' most common elements, estimated at 5,000, read
 * all its matches, up to ~11,000 pages). Past SPAN_MIN_MATCHES a span spares at least 1,500 rows,
 * and at the sizes where a span is hundreds of thousands of chunks the table is beyond
 * shared_buffers, so most rows spared are page reads from outside it. docs/decisions.md.
 */
export function windowSpan(matches: number, chunks: number): number | null {
  if (!(matches > SPAN_MIN_MATCHES && chunks > 0) || chunks / matches < SPAN_MIN_CHUNKS_PER_MATCH) return null;
  return Math.ceil((SPAN_MARGIN * RANK_WINDOW * chunks) / matches);
}

/** The exact tier's condition; `impliesStemmed` when a chunk matching it matches the stemmed tsquery too. */
interface ExactMatch {
  tsquery: Tsquery;
  impliesStemmed: boolean;
}

/**
 * What a chunk of the collection must match (the first parameter is the collection), its SQL
 * built with `param`. With `drives`, the index is asked for them and each of their rows is
 * checked for the whole tsquery by `ts_match_vq`, which is `@@` as a function call: the planner
 * never takes a function call to an index, so the prefix is not looked up there. A drive with no
 * lexeme (a unit the parser keeps no word of) would match nothing: then the whole tsquery is
 * looked up, as without a drive.
 */
function chunkConditions(param: (value: unknown) => string, stemmedSql: () => string, exact: ExactMatch | null, drives: { stemmed: Tsquery; exact: Tsquery } | null): string[] {
  const matching = (column: string, sql: string, drive: Tsquery | undefined) => {
    if (!drive) return `${column} @@ (${sql})`;
    const others = drive.sql(param);
    return `${column} @@ (CASE WHEN numnode(${others}) > 0 THEN ${others} ELSE ${sql} END) AND ts_match_vq(${column}, ${sql})`;
  };
  const conditions = [IN_COLLECTION];
  if (!exact?.impliesStemmed) conditions.push(matching("c.tsv", stemmedSql(), drives?.stemmed));
  if (exact) conditions.push(matching("c.tsv_exact", exact.tsquery.sql(param), drives?.exact));
  return conditions;
}

/** Replaces documents (old versions by source and path out, new ones in), inside the caller's transaction. */
async function writeDocuments(q: QueryRunner, collection: string, group: { doc: DocumentInput; id: string }[]): Promise<void> {
  const docs = group.map(({ doc, id }) => ({ doc, id, title: pgText(doc.title), path: pgText(doc.path) }));
  await q.query(
    `DELETE FROM search_documents d USING unnest($2::text[], $3::text[]) AS x(source_id, path)
     WHERE d.collection_id = $1 AND d.source_id = x.source_id AND d.path = x.path`,
    [collection, docs.map((d) => d.doc.sourceId), docs.map((d) => d.path)],
  );
  const now = Date.now();
  await q.query(
    `INSERT INTO search_documents (id, collection_id, source_id, path, title, size, modified_at, version, chunk_count, indexed_at)
     SELECT x.id, $1, x.source_id, x.path, x.title, x.size, x.modified_at, x.version, x.chunk_count, $10
     FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::bigint[], $8::text[], $9::integer[])
       AS x(id, source_id, path, title, size, modified_at, version, chunk_count)`,
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
    ],
  );
  const chunks = docs.flatMap((d, i) => d.doc.chunks.map((c) => ({ id: d.id, index: c.chunkIndex, head: i + 1, body: pgText(c.text) })));
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
     INSERT INTO search_chunks (collection_id, document_id, chunk_index, title, path, body, tsv, tsv_exact)
     SELECT $1, x.document_id, x.chunk_index, h.title, h.path, x.body,
            h.tsv || setweight(to_tsvector('${CONFIG}', x.body_words), 'C'),
            strip(h.tsv_exact || to_tsvector('${EXACT_CONFIG}', x.body_words))
     FROM unnest($6::text[], $7::integer[], $8::integer[], $9::text[], $10::text[]) WITH ORDINALITY AS x(document_id, chunk_index, head, body, body_words, n)
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
    ],
  );
}

/** Collection ids are UUIDs (as the SQLite engine requires for its file names); anything else is not found. */
function collectionKey(collectionId: string): string {
  if (!UUID.test(collectionId)) throw new NotFoundError("Collection not found");
  return collectionId.toLowerCase();
}

function pgText(text: string): string {
  return clean(text).replace(NUL, "");
}

function nullIfNaN(n: number): number | null {
  return Number.isNaN(n) ? null : n;
}

/** A tsquery as SQL, its user text handed to `param` (which answers the placeholder). */
interface Tsquery {
  sql(param: (value: string) => string): string;
  /** For a prefix attempt of several units: its other units, and the prefix unit alone (see TsquerySplit). */
  split: TsquerySplit | null;
}

/**
 * A prefix attempt's tsquery in two parts, all of whose matches match both. PostgreSQL looks up
 * a prefix in a GIN index by collecting the entries of every word it begins, whole, before
 * ANDing them with the other words: at 1,000,000 chunks 'fenfen':* is ~500,000 entries and took
 * ~50 ms per index however rare the other words were (the slowest of the search bench's queries,
 * 100-200 ms for the two tiers). When the other words are rare, they are looked up instead and
 * the prefix checked on each of their rows (well under a millisecond for a few hundred).
 */
interface TsquerySplit {
  others: Tsquery;
  prefix: Tsquery;
}

/**
 * The tsquery for the units, all (&&) or any (||) of them: a unit is a phrase
 * (phraseto_tsquery parses plain text, so no input is ever tsquery syntax); a prefix unit's
 * last token becomes 'token':* (tokens are letters, digits, marks and symbols only, and are
 * quoted besides). Under EXACT_CONFIG a phrase's words are asked for each on their own, as the
 * SQLite engine's position-less exact table does: the stemmed query beside it asks for the phrase.
 */
function toTsquery(units: QueryUnit[], attempt: MatchAttempt, config: string): Tsquery {
  const words = config === EXACT_CONFIG ? "plainto_tsquery" : "phraseto_tsquery";
  const joiner = attempt.matched === "all" ? "&&" : "||";
  // A word typed twice is asked for once (the planner would count its selectivity twice).
  const distinct = [...new Map(units.map((u) => [`${attempt.prefix && u.prefix}:${u.tokens.join(" ")}`, u])).values()];
  const tsquery = (some: QueryUnit[], split: TsquerySplit | null): Tsquery => ({
    sql: (param) =>
      some
        .map((unit) => {
          if (!(attempt.prefix && unit.prefix)) return `${words}('${config}', ${param(unit.tokens.join(" "))})`;
          const last = unit.tokens.at(-1)!;
          const lastQuery = `to_tsquery('${config}', ${param(`'${last.replace(/['\\]/g, "")}':*`)})`;
          if (unit.tokens.length === 1) return lastQuery;
          const head = `${words}('${config}', ${param(unit.tokens.slice(0, -1).join(" "))})`;
          return config === EXACT_CONFIG ? `${head} && ${lastQuery}` : `tsquery_phrase(${head}, ${lastQuery})`;
        })
        .map((p) => `(${p})`)
        .join(` ${joiner} `),
    split,
  });
  // Only the last unit can be a prefix, and a prefix attempt asks for all units.
  const prefixed = attempt.prefix && attempt.matched === "all" && distinct.length > 1 && distinct.at(-1)!.prefix;
  return tsquery(distinct, prefixed ? { others: tsquery(distinct.slice(0, -1), null), prefix: tsquery(distinct.slice(-1), null) } : null);
}

/** The headline was made from the text with SEPARATORS as spaces: put the original characters back around the marks. */
function restore(marked: string, original: string): string {
  let out = "";
  let i = 0;
  for (let k = 0; k < marked.length; k++) {
    const ch = marked[k];
    if (ch === MARK_OPEN || ch === MARK_CLOSE) out += ch;
    else out += original[i++] ?? "";
  }
  // Alignment holds when ts_headline reproduced the whole text; if it ever did not, keep its own output.
  return i === original.length ? out : marked;
}

const SNIPPET_WORD = /[\p{L}\p{N}\p{M}\p{Co}\p{So}\uE000\uE001]+/gu;

/**
 * ts_headline marks every match of the whole chunk; this keeps SNIPPET_WORDS words around the
 * first one, with "…" where text was cut, the shape of FTS5's snippet(). Marks cut by the
 * window are closed or reopened so they stay balanced.
 */
function snippetWindow(marked: string): string {
  const words = [...marked.matchAll(SNIPPET_WORD)].map((m) => ({ start: m.index, end: m.index + m[0].length }));
  if (words.length <= SNIPPET_WORDS) return marked;
  const firstMark = marked.indexOf(MARK_OPEN);
  const hit = Math.max(0, words.findIndex((w) => w.end > firstMark));
  const first = Math.min(Math.max(0, hit - 5), words.length - SNIPPET_WORDS);
  const last = first + SNIPPET_WORDS - 1;
  const from = first === 0 ? 0 : words[first].start;
  const to = last === words.length - 1 ? marked.length : words[last].end;
  const before = marked.slice(0, from);
  const openBefore = before.lastIndexOf(MARK_OPEN) > before.lastIndexOf(MARK_CLOSE);
  let text = (openBefore ? MARK_OPEN : "") + marked.slice(from, to);
  if (text.lastIndexOf(MARK_OPEN) > text.lastIndexOf(MARK_CLOSE)) text += MARK_CLOSE;
  return `${first > 0 ? "…" : ""}${text}${to < marked.length ? "…" : ""}`;
}

/**
 * ts_headline marks each word, FTS5 marks each phrase match as a whole. Neighbouring marks
 * (only punctuation or space between) are merged up to the longest phrase of the query, so
 * "<m>quarterly</m> <m>budget</m>" becomes one mark for a quoted phrase and stays two for two terms.
 */
function joinMarks(raw: string, phraseLength: number): string {
  if (phraseLength < 2) return raw;
  let words = 1;
  const pattern = new RegExp(`${MARK_CLOSE}([^\\p{L}\\p{N}${MARK_OPEN}${MARK_CLOSE}]+)${MARK_OPEN}|${MARK_OPEN}`, "gu");
  return raw.replace(pattern, (match: string, between: string | undefined) => {
    if (between !== undefined && words < phraseLength) {
      words++;
      return between;
    }
    words = 1;
    return match;
  });
}

