import type { QueryRunner } from "typeorm";
import { words } from "./postgres-fts-words";

/**
 * The tables of the collection index on PostgreSQL full-text search, in the team server's own database:
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
 * 5 maps all-ASCII words past unaccent, which has nothing to change in them; 6 adds file-server
 * permissions: `search_acls`, each distinct ACL of a collection once, and each document's `acl`
 * (null: every member may read it) and `changed_at`, postgres-fts-acls.ts), and keeps where each
 * chunk is: `page`, `location`, `scanned`, marking paged documents indexed before to be read again;
 * 7 adds `search_empty_files`: per collection and source, the files that yielded no text (no
 * document) with the identity they were read at, so a re-run skips an unchanged one unread
 * (markEmpty; docs/decisions/0497-files-without-text-remembered.md).
 *
 * Ranking reads every candidate's `tsv`, so the tsvectors stay in the heap row, uncompressed
 * (STORAGE MAIN under a 4 KB `toast_tuple_target`; the body goes to TOAST instead): a candidate
 * is one buffer, not a TOAST index lookup and several chunks per tsvector (12x fewer buffers).
 * The INSERT computes them from text the engine has already turned into words (SEPARATORS to
 * spaces in JS: PostgreSQL's translate() was half the cost of a row), the title and path once
 * per document (postgres-fts-writes.ts).
 */

export const SCHEMA_VERSION = 7;
/** The BRIN index on search_chunks(id) (schema 4): how a span's id range is read. */
const ID_RANGES = "search_chunks_id_brin";
export const CONFIG = "sluice_search";
/** Words as typed (unaccented, lower case, no stemming): which chunks have the query's words in the very form typed. */
export const EXACT_CONFIG = "sluice_exact";
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
    // No row changes: the lexemes are the same (docs/decisions/0105-postgres-ascii-skips-unaccent.md).
    await q.query(`ALTER TEXT SEARCH CONFIGURATION ${CONFIG} ALTER MAPPING FOR ${ASCII_WORD_TYPES} WITH sluice_stem`);
    await q.query(`ALTER TEXT SEARCH CONFIGURATION ${EXACT_CONFIG} ALTER MAPPING FOR ${ASCII_WORD_TYPES} WITH simple`);
  },
  6: async (q) => {
    // Nullable columns: no row is rewritten. IF NOT EXISTS: a database an older build was pointed back at keeps them.
    await q.query("ALTER TABLE search_documents ADD COLUMN IF NOT EXISTS acl text, ADD COLUMN IF NOT EXISTS changed_at bigint");
    // Counts and listings of what a caller may read; a ranking reaches each candidate's document by its key.
    await q.query("CREATE INDEX IF NOT EXISTS search_documents_acl ON search_documents (collection_id, acl)");
    await q.query(`CREATE TABLE IF NOT EXISTS search_acls (
      collection_id varchar NOT NULL,
      hash text NOT NULL,
      seq bigserial NOT NULL,
      server text NOT NULL,
      acl text NOT NULL,
      PRIMARY KEY (collection_id, hash)
    )`);
    // Columns with no default or a constant one: no table rewrite, whatever the table's size.
    await q.query(`ALTER TABLE search_chunks ADD COLUMN IF NOT EXISTS page integer, ADD COLUMN IF NOT EXISTS location text, ADD COLUMN IF NOT EXISTS scanned boolean NOT NULL DEFAULT false`);
    // The next run reads these files again for their pages (the SQLite engine's PAGES_PENDING).
    await q.query(`UPDATE search_documents SET version = '${PAGES_PENDING}' WHERE ${PAGED_DOCUMENTS}`);
  },
  7: async (q) => {
    // A new, empty table: nothing existing is rewritten. IF NOT EXISTS, as in 6.
    await q.query(`CREATE TABLE IF NOT EXISTS search_empty_files (
      collection_id varchar NOT NULL,
      source_id varchar NOT NULL,
      path text NOT NULL,
      size bigint NOT NULL,
      modified_at bigint NOT NULL,
      version text,
      PRIMARY KEY (collection_id, source_id, path)
    )`);
  },
};

/** As the SQLite engine's (sqlite-fts-schema.ts): a version no source reports, so the file is read again. */
const PAGES_PENDING = "pages-pending";
const PAGED_DOCUMENTS = ["pdf", "pptx", "pptm", "xlsx", "xlsm"].map((ext) => `lower(path) LIKE '%.${ext}'`).join(" OR ");

/**
 * Brings the search tables to SCHEMA_VERSION inside the caller's transaction, under an advisory
 * lock so that processes starting together take turns.
 */
export async function migrateSchema(q: QueryRunner): Promise<void> {
  await q.query("SELECT pg_advisory_xact_lock($1)", [SCHEMA_LOCK_KEY]);
  await q.query("CREATE TABLE IF NOT EXISTS search_schema (version integer NOT NULL)");
  const rows = (await q.query("SELECT version FROM search_schema")) as { version: number }[];
  const current = rows[0]?.version ?? 0;
  if (current > SCHEMA_VERSION) throw new Error(`The search tables have schema version ${current}, newer than this build (${SCHEMA_VERSION})`);
  for (let version = current + 1; version <= SCHEMA_VERSION; version++) await MIGRATIONS[version](q);
  if (rows.length === 0) await q.query("INSERT INTO search_schema (version) VALUES ($1)", [SCHEMA_VERSION]);
  else await q.query("UPDATE search_schema SET version = $1", [SCHEMA_VERSION]);
}
