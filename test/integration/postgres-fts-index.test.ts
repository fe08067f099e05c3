import { describe, test } from "node:test";
import assert from "node:assert/strict";
import crypto from "node:crypto";
import type { DataSource } from "typeorm";
import { PostgresFtsIndex } from "../../server/search/postgres";
import { wordsOf } from "../../server/search/postgres/postgres-fts-words";
import { SCHEMA_VERSION } from "../../server/search/postgres/postgres-fts-schema";
import type { DocumentInput } from "../../server/search/search-index";
import { postgresBinDir, sharedPostgres } from "../fixtures/postgres";
import { freshPostgresDatabases } from "../fixtures/postgres-databases";
import { waitFor } from "../fixtures/wait-for";

// What only the PostgreSQL engine has: tsvectors written by its INSERT (schema 3) and the
// upgrade from generated columns (schema 2). Search behaviour on both engines is in sqlite-fts-index.test.ts.

const SOURCE = "8f0c2a4e-5d1b-4c3a-9e7f-0a1b2c3d4e5f";
/** The schema-2 generated expressions, as a database made before schema 3 holds them. */
const WORDS = (column: string) => `translate(${column}, '<>&@/\\:.~_=?#%+', '               ')`;
const V2_TSV = `setweight(to_tsvector('sluice_search'::regconfig, ${WORDS("title")}), 'A') || setweight(to_tsvector('sluice_search'::regconfig, ${WORDS("path")}), 'B') || setweight(to_tsvector('sluice_search'::regconfig, ${WORDS("body")}), 'C')`;
const V2_EXACT = `to_tsvector('sluice_exact'::regconfig, ${WORDS("title")} || ' ' || ${WORDS("path")} || ' ' || ${WORDS("body")})`;

/** A node of EXPLAIN (ANALYZE, FORMAT JSON)'s plan, with the CTE it computes. */
interface CteNode {
  "Subplan Name"?: string;
  "Actual Rows": number;
  Plans?: CteNode[];
}

/** A node of EXPLAIN (ANALYZE, FORMAT JSON)'s plan. */
interface AnalyzedNode {
  "Rows Removed by Filter"?: number;
  Plans?: AnalyzedNode[];
}

function doc(p: string, texts: string[], title = p.split("/").at(-1)!): DocumentInput {
  return {
    sourceId: SOURCE,
    path: p,
    title,
    size: texts.join("").length,
    modifiedAt: new Date("2024-05-01T10:00:00.000Z"),
    version: null,
    chunks: texts.map((text, chunkIndex) => ({ chunkIndex, text })),
  };
}

test("wordsOf turns exactly the separators into spaces, unit for unit (as translate() does), whatever else the text holds", () => {
  const separators = "<>&@/\\:.~_=?#%+";
  const alphabet = [...separators, ..."aZ9 \t\n-'\"é€", "\u0000", "😀", "\ud800", "\udfff"];
  const rng = (n: number) => crypto.randomInt(n);
  for (let i = 0; i < 2_000; i++) {
    const text = Array.from({ length: rng(300) }, () => alphabet[rng(alphabet.length)]).join("");
    const expected = [...text].map((c) => (separators.includes(c) ? " " : c)).join("");
    assert.equal(wordsOf(text), expected, JSON.stringify(text));
  }
  assert.equal(wordsOf(""), "");
  assert.equal(wordsOf("https://host.example/a_b?c=1#d"), "https   host example a b c 1 d");
});

describe("PostgreSQL full-text index", { skip: postgresBinDir() ? false : "PostgreSQL is not installed" }, () => {
  const newDatabase = freshPostgresDatabases();

  test("every connection of the pool has JIT compilation off and an idle-in-transaction limit (the cluster's defaults: on, none)", async () => {
    const cluster = await sharedPostgres();
    const url = await cluster.createDatabase();
    const [clusterDefault] = await cluster.query<{ jit: string; idle: string }>(url, "SELECT current_setting('jit') AS jit, current_setting('idle_in_transaction_session_timeout') AS idle");
    assert.deepEqual(clusterDefault, { jit: "on", idle: "0" });
    const db = await newDatabase(url);
    // Four at once, so the pool opens connections beside the one it already had.
    const settings = (
      await Promise.all(
        Array.from({ length: 4 }, () =>
          db.query("SELECT current_setting('jit') AS jit, current_setting('idle_in_transaction_session_timeout') AS idle, pg_backend_pid() AS pid, pg_sleep(0.05)"),
        ),
      )
    ).map(([row]) => row as { jit: string; idle: string; pid: number });
    assert.ok(new Set(settings.map((s) => s.pid)).size > 1, "several connections");
    assert.deepEqual(
      settings.map(({ jit, idle }) => ({ jit, idle })),
      Array.from({ length: 4 }, () => ({ jit: "off", idle: "20s" })),
    );
    const runner = db.createQueryRunner();
    await runner.connect();
    assert.deepEqual(await runner.query("SHOW jit"), [{ jit: "off" }]);
    // Inside a transaction too: the limit is what ends the session of a process frozen there.
    const inTransaction = await db.transaction((tx) => tx.query("SHOW idle_in_transaction_session_timeout"));
    assert.deepEqual(inTransaction, [{ idle_in_transaction_session_timeout: "20s" }]);
    await runner.release();
  });

  test("each chunk's tsvectors are those of the schema-2 expressions (separators as spaces, title A, path B, body C; exact words)", async () => {
    const db = await newDatabase();
    const index = new PostgresFtsIndex(db);
    const collection = crypto.randomUUID();
    await index.upsertDocuments(collection, [
      doc("share/Q1_report/budget.final.txt", ["Mail ana@example.com about the café's <b>running</b> costs", "second part: https://intranet.example/wiki?page=42#top"], "Q1 Budget: final"),
      doc("share/notes/e-mail~draft.md", ["Highlighters, highlighted & highlighting"]),
    ]);
    const staged = await index.stageDocument(collection, { sourceId: SOURCE, path: "big/stream.log", title: "stream.log", size: 10, modifiedAt: new Date(), version: null });
    await staged.addChunks([{ chunkIndex: 0, text: "streamed_words go:here" }]);
    await staged.commit();
    const rows = (await db.query(
      `SELECT path, chunk_index, tsv = (${V2_TSV}) AS same, strip(tsv_exact) = strip(${V2_EXACT}) AS same_exact, tsv::text AS tsv
       FROM search_chunks WHERE collection_id = $1 ORDER BY path, chunk_index`,
      [collection],
    )) as { path: string; chunk_index: number; same: boolean; same_exact: boolean; tsv: string }[];
    assert.equal(rows.length, 4);
    for (const row of rows) assert.ok(row.same && row.same_exact, `${row.path}#${row.chunk_index}: ${row.tsv}`);
  });

  test("a batch of more chunks than one statement takes goes in several, every chunk under its own document's title and path, in order", async () => {
    const db = await newDatabase();
    const index = new PostgresFtsIndex(db);
    const collection = crypto.randomUUID();
    const long = Array.from({ length: 1_203 }, (_, i) => `part ${i} of the long one`);
    await index.upsertDocuments(collection, [
      doc("first.txt", ["a short first"], "Alpha"),
      doc("long/report.txt", long, "Bravo"),
      doc("last.txt", ["a short last", "and its second"], "Charlie"),
    ]);
    const rows = (await db.query(
      `SELECT c.path, c.chunk_index, c.same, c.same_exact, d.path AS document_path
       FROM (SELECT id, document_id, path, chunk_index, tsv = (${V2_TSV}) AS same, strip(tsv_exact) = strip(${V2_EXACT}) AS same_exact
             FROM search_chunks WHERE collection_id = $1) c
       JOIN search_documents d ON d.id = c.document_id ORDER BY c.id`,
      [collection],
    )) as { path: string; chunk_index: number; same: boolean; same_exact: boolean; document_path: string }[];
    const expected = [["first.txt", 0], ...long.map((_, i) => ["long/report.txt", i]), ["last.txt", 0], ["last.txt", 1]];
    assert.deepEqual(rows.map((r) => [r.path, r.chunk_index]), expected);
    for (const row of rows) {
      assert.equal(row.document_path, row.path);
      assert.ok(row.same && row.same_exact, `${row.path}#${row.chunk_index}`);
    }
    const [hit] = await index.search(collection, "bravo", 1);
    assert.equal(hit.path, "long/report.txt");
  });

  test("rows keep their tsvectors inline and uncompressed (plain columns, STORAGE MAIN, 4 KB toast_tuple_target)", async () => {
    const db = await newDatabase();
    const index = new PostgresFtsIndex(db);
    const collection = crypto.randomUUID();
    await index.upsertDocument(collection, doc("a.txt", [Array.from({ length: 180 }, (_, i) => `word${i} text`).join(" ")]));
    const [row] = (await db.query(
      `SELECT pg_column_size(tsv) AS stored, (SELECT reloptions FROM pg_class WHERE relname = 'search_chunks') AS options
       FROM search_chunks WHERE collection_id = $1`,
      [collection],
    )) as { stored: number; options: string[] }[];
    const storage = (await db.query(
      "SELECT attname, attstorage, attgenerated FROM pg_attribute WHERE attrelid = 'search_chunks'::regclass AND attname IN ('tsv', 'tsv_exact') ORDER BY attname",
    )) as { attname: string; attstorage: string; attgenerated: string }[];
    assert.deepEqual(
      storage.map((s) => [s.attname, s.attstorage, s.attgenerated]),
      [
        ["tsv", "m", ""],
        ["tsv_exact", "m", ""],
      ],
    );
    assert.deepEqual(row.options, ["toast_tuple_target=4080"]);
    assert.ok(row.stored > 2000, `a 180-word chunk's tsvector is stored whole in the row (${row.stored} bytes)`);
  });

  test("a batch's GIN entries wait in the indexes' pending lists (searchable there); settleWrites folds them in", async () => {
    const db = await newDatabase();
    const index = new PostgresFtsIndex(db);
    const collection = crypto.randomUUID();
    const texts = Array.from({ length: 40 }, (_, i) => `Chunk ${i} of the pelican ledger, with words like harbour${i} and quay${i}.`);
    await index.upsertDocuments(collection, [doc("ledger/a.txt", texts), doc("ledger/b.txt", texts)]);
    // Pending entries answer searches like folded ones.
    assert.deepEqual((await index.search(collection, "harbour7", 10)).map((h) => h.path).sort(), ["ledger/a.txt", "ledger/b.txt"]);
    await index.settleWrites();
    const [folded] = (await db.query(
      "SELECT gin_clean_pending_list('search_chunks_tsv')::int AS tsv, gin_clean_pending_list('search_chunks_tsv_exact')::int AS exact",
    )) as { tsv: number; exact: number }[];
    assert.deepEqual(folded, { tsv: 0, exact: 0 }, "nothing left pending after settleWrites");
    assert.deepEqual((await index.search(collection, "harbour7", 10)).map((h) => h.path).sort(), ["ledger/a.txt", "ledger/b.txt"]);

    // Without settleWrites the entries stay pending: a second batch leaves pages to fold.
    await index.upsertDocuments(collection, [doc("ledger/c.txt", texts)]);
    const [pending] = (await db.query(
      "SELECT gin_clean_pending_list('search_chunks_tsv')::int AS tsv, gin_clean_pending_list('search_chunks_tsv_exact')::int AS exact",
    )) as { tsv: number; exact: number }[];
    assert.ok(pending.tsv > 0 && pending.exact > 0, `the batch's entries were pending: ${JSON.stringify(pending)}`);
  });

  test("a job's end folds the GIN lists only after chunks were inserted since the last fold: a no-change re-run sends no fold (decision 0542)", async () => {
    const db = await newDatabase();
    const folds: string[] = [];
    const query = db.query.bind(db);
    db.query = ((sql: string, ...rest: unknown[]) => {
      if (sql.includes("gin_clean_pending_list")) folds.push(sql);
      return (query as (...args: unknown[]) => Promise<unknown>)(sql, ...rest);
    }) as typeof db.query;
    const foldsOf = async (step: () => Promise<unknown>) => {
      const before = folds.length;
      await step();
      await index.settleWrites();
      return folds.length - before;
    };
    const index = new PostgresFtsIndex(db);
    const collection = crypto.randomUUID();
    const texts = Array.from({ length: 20 }, (_, i) => `Chunk ${i} of the heron ledger, harbour${i}.`);
    // What an earlier process left is not known: the first job's end folds.
    assert.equal(await foldsOf(async () => undefined), 2, "both indexes folded at the first job's end");
    assert.equal(await foldsOf(async () => undefined), 0, "nothing inserted since: no fold");
    await index.upsertDocuments(collection, [doc("ledger/a.txt", texts), doc("ledger/b.txt", texts)]);
    await index.settleWrites();
    // Removals, marks of files without text and permissions add no GIN entries.
    assert.equal(
      await foldsOf(async () => {
        await index.removeDocuments(collection, SOURCE, ["ledger/b.txt"]);
        await index.markEmpty(collection, SOURCE, [{ path: "ledger/empty.pdf", size: 10, modifiedAt: new Date(), version: null }]);
        await index.updatePermissions(collection, SOURCE, [{ path: "ledger/a.txt", permissions: null }]);
      }),
      0,
    );
    assert.equal(await foldsOf(() => index.upsertDocuments(collection, [doc("ledger/c.txt", texts)])), 2, "a batch's chunks are folded");
    const staged = await foldsOf(async () => {
      const { chunks: _none, ...header } = doc("ledger/d.txt", []);
      const document = await index.stageDocument(collection, header);
      await document.addChunks(texts.map((text, chunkIndex) => ({ chunkIndex, text })));
      await document.commit();
    });
    assert.equal(staged, 2, "a staged document's chunks are folded");
    const [left] = (await query(
      "SELECT gin_clean_pending_list('search_chunks_tsv')::int AS tsv, gin_clean_pending_list('search_chunks_tsv_exact')::int AS exact",
    )) as { tsv: number; exact: number }[];
    assert.deepEqual(left, { tsv: 0, exact: 0 }, "nothing left pending after the last job's end");
  });

  test("an index of schema version 2 (generated columns) is upgraded in place and keeps answering", async () => {
    const db = await newDatabase();
    const collection = crypto.randomUUID();
    await new PostgresFtsIndex(db).upsertDocument(collection, doc("old.txt", ["a pelican wrote this before the upgrade"]));
    // Back to what schema 2 made: generated columns under GIN, default storage, no BRIN index.
    await db.query("ALTER TABLE search_chunks DROP COLUMN tsv, DROP COLUMN tsv_exact, RESET (toast_tuple_target)");
    await db.query("DROP INDEX search_chunks_id_brin");
    await db.query(`ALTER TABLE search_chunks ADD COLUMN tsv tsvector GENERATED ALWAYS AS (${V2_TSV}) STORED, ADD COLUMN tsv_exact tsvector GENERATED ALWAYS AS (${V2_EXACT}) STORED`);
    await db.query("CREATE INDEX search_chunks_tsv ON search_chunks USING gin (tsv)");
    await db.query("CREATE INDEX search_chunks_tsv_exact ON search_chunks USING gin (tsv_exact)");
    await db.query("UPDATE search_schema SET version = 2");

    const index = new PostgresFtsIndex(db);
    assert.deepEqual((await index.search(collection, "pelican", 10)).map((h) => h.path), ["old.txt"]);
    assert.deepEqual(await db.query("SELECT version FROM search_schema"), [{ version: SCHEMA_VERSION }]);
    await index.upsertDocument(collection, doc("new.txt", ["a pelican wrote this after the upgrade"], "Pelican"));
    const hits = await index.search(collection, "pelicans", 10);
    assert.deepEqual(hits.map((h) => h.path), ["new.txt", "old.txt"]);
    assert.ok(hits.every((h) => !h.exact));
    assert.deepEqual((await index.search(collection, "upgrade", 10)).map((h) => h.path).sort(), ["new.txt", "old.txt"]);
  });

  test("an index of schema version 6 gets the table of files without text (schema 7) and keeps its documents", async () => {
    const db = await newDatabase();
    const collection = crypto.randomUUID();
    await new PostgresFtsIndex(db).upsertDocument(collection, doc("old.txt", ["a pelican wrote this before the upgrade"]));
    // Back to what schema 6 made: no search_empty_files.
    await db.query("DROP TABLE search_empty_files");
    await db.query("UPDATE search_schema SET version = 6");

    const index = new PostgresFtsIndex(db);
    assert.deepEqual([...(await index.indexedState(collection, SOURCE)).keys()], ["old.txt"]);
    assert.deepEqual(await db.query("SELECT version FROM search_schema"), [{ version: SCHEMA_VERSION }]);
    await index.markEmpty(collection, SOURCE, [{ path: "photo.png", size: 7, modifiedAt: new Date(0), version: null }]);
    assert.deepEqual((await index.indexedState(collection, SOURCE)).get("photo.png"), { size: 7, modifiedAt: new Date(0), version: null, changedAt: null, aclId: null, empty: true });
    assert.equal((await index.stats(collection)).documentCount, 1);
  });

  test("an index of schema version 3 gets the BRIN index on chunk ids (schema 4) and keeps its rows and answers", async () => {
    const db = await newDatabase();
    const collection = crypto.randomUUID();
    const before = new PostgresFtsIndex(db);
    await before.upsertDocuments(collection, [doc("a.txt", ["a pelican wrote this before the upgrade"], "Pelican"), doc("b.txt", ["pelicans and other birds"])]);
    const answer = await before.search(collection, "pelican", 10);
    // Back to what schema 3 made: no BRIN index.
    await db.query("DROP INDEX search_chunks_id_brin");
    await db.query("UPDATE search_schema SET version = 3");

    const index = new PostgresFtsIndex(db);
    assert.deepEqual(await index.search(collection, "pelican", 10), answer);
    assert.deepEqual(await db.query("SELECT version FROM search_schema"), [{ version: SCHEMA_VERSION }]);
    const [brin] = (await db.query("SELECT amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.relname = 'search_chunks_id_brin'")) as { amname: string }[];
    assert.equal(brin?.amname, "brin");
    await index.upsertDocument(collection, doc("c.txt", ["a pelican wrote this after the upgrade"]));
    assert.deepEqual((await index.search(collection, "upgrade", 10)).map((h) => h.path).sort(), ["a.txt", "c.txt"]);
  });

  test("schema 5: all-ASCII words go past unaccent, with the same lexemes as before; an index of version 4 is upgraded", async () => {
    const db = await newDatabase();
    const index = new PostgresFtsIndex(db);
    const collection = crypto.randomUUID();
    await index.upsertDocument(collection, doc("cafe.txt", ["Le café-crème, naïve résumés"]));
    const [{ unaccent }] = (await db.query("SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'unaccent') AS unaccent")) as { unaccent: boolean }[];
    const mapping = async (config: string) =>
      (await db.query(
        `SELECT t.alias, string_agg(d.dictname, ',' ORDER BY m.mapseqno) AS dictionaries
         FROM pg_ts_config_map m JOIN pg_ts_dict d ON d.oid = m.mapdict
         JOIN ts_token_type('default') t ON t.tokid = m.maptokentype
         WHERE m.mapcfg = $1::regconfig AND t.alias IN ('asciiword', 'word') GROUP BY t.alias ORDER BY t.alias`,
        [config],
      )) as { alias: string; dictionaries: string }[];
    const withUnaccent = (dictionary: string) => (unaccent ? `unaccent,${dictionary}` : dictionary);
    assert.deepEqual(await mapping("sluice_search"), [
      { alias: "asciiword", dictionaries: "sluice_stem" },
      { alias: "word", dictionaries: withUnaccent("sluice_stem") },
    ]);
    assert.deepEqual(await mapping("sluice_exact"), [
      { alias: "asciiword", dictionaries: "simple" },
      { alias: "word", dictionaries: withUnaccent("simple") },
    ]);
    // Schema 4's mappings (unaccent before every word type), to compare with.
    const types = "asciiword, asciihword, hword_asciipart, word, hword, hword_part, numword, numhword, hword_numpart";
    const before = unaccent ? "unaccent, " : "";
    await db.query("CREATE TEXT SEARCH CONFIGURATION v4_search (COPY = sluice_search)");
    await db.query(`ALTER TEXT SEARCH CONFIGURATION v4_search ALTER MAPPING FOR ${types} WITH ${before}sluice_stem`);
    await db.query("CREATE TEXT SEARCH CONFIGURATION v4_exact (COPY = sluice_exact)");
    await db.query(`ALTER TEXT SEARCH CONFIGURATION v4_exact ALTER MAPPING FOR ${types} WITH ${before}simple`);
    const texts = [
      "Running runners ran; the e-mail of the well-known re-entry was reviewed.",
      "Café-bar, naïve-approach, crème-brûlée and Ærøskøbing: straße, ﬁnd, ½, © and x² résumé-2 naïve2 ÉCOLE Łódź ǅemal über-cool 3-β",
      "MIXED case Words with digits abc123 and 123abc, hyphen-ated ascii-only-words and un-accénted-parts",
      "日本語のテキスト, Ελληνικά κείμενα, русский текст, עברית",
    ];
    for (const text of texts) {
      const [row] = (await db.query(
        "SELECT to_tsvector('sluice_search', $1) = to_tsvector('v4_search', $1) AS search, to_tsvector('sluice_exact', $1) = to_tsvector('v4_exact', $1) AS exact",
        [text],
      )) as { search: boolean; exact: boolean }[];
      assert.deepEqual(row, { search: true, exact: true }, text);
    }
    if (unaccent) assert.deepEqual((await index.search(collection, "cafe creme", 10)).map((h) => h.path), ["cafe.txt"]);

    // An index of version 4 (unaccent before every word type) is upgraded: its mappings change, its rows do not.
    await db.query(`ALTER TEXT SEARCH CONFIGURATION sluice_search ALTER MAPPING FOR ${types} WITH ${before}sluice_stem`);
    await db.query(`ALTER TEXT SEARCH CONFIGURATION sluice_exact ALTER MAPPING FOR ${types} WITH ${before}simple`);
    await db.query("UPDATE search_schema SET version = 4");
    const upgraded = new PostgresFtsIndex(db);
    assert.deepEqual((await upgraded.search(collection, "naive resume", 10)).map((h) => h.path), unaccent ? ["cafe.txt"] : []);
    assert.deepEqual(await db.query("SELECT version FROM search_schema"), [{ version: SCHEMA_VERSION }]);
    assert.deepEqual((await mapping("sluice_search"))[0], { alias: "asciiword", dictionaries: "sluice_stem" });
    assert.deepEqual((await mapping("sluice_exact"))[0], { alias: "asciiword", dictionaries: "simple" });
  });

  test("past 2,000 matches only the newest are ranked: an old best match is left out", async () => {
    const db = await newDatabase();
    const index = new PostgresFtsIndex(db);
    const collection = crypto.randomUUID();
    await index.upsertDocument(collection, doc("old/best.txt", ["kestrel kestrel kestrel"], "Kestrel"));
    const rest = Array.from({ length: 2000 }, (_, i) => doc(`new/${i}.txt`, [`one kestrel among other words ${i}`]));
    for (let i = 0; i < rest.length; i += 500) await index.upsertDocuments(collection, rest.slice(i, i + 500));
    await index.upsertDocument(collection, doc("new/best.txt", ["kestrel kestrel kestrel"], "Kestrel"));
    const hits = await index.search(collection, "kestrel", 5);
    assert.equal(hits[0].path, "new/best.txt");
    assert.ok(!hits.some((h) => h.path === "old/best.txt"), hits.map((h) => h.path).join(", "));
    // A rarer word is ranked over all its matches, however old.
    await index.upsertDocument(collection, doc("new/osprey.txt", ["an osprey"]));
    await index.upsertDocument(collection, doc("new/osprey-2.txt", ["osprey osprey osprey"], "Osprey"));
    assert.deepEqual((await index.search(collection, "osprey", 5)).map((h) => h.path), ["new/osprey-2.txt", "new/osprey.txt"]);
  });

  /** Writes the documents 1,000 at a time, then ANALYZE: the planner's estimates choose how the window is read. */
  async function load(index: PostgresFtsIndex, db: DataSource, collection: string, docs: DocumentInput[]) {
    for (let i = 0; i < docs.length; i += 1000) await index.upsertDocuments(collection, docs.slice(i, i + 1000));
    await db.query("ANALYZE search_chunks");
  }
  /** Records the statements the index runs, to know which way it read the window. */
  function statements(db: DataSource): string[] {
    const seen: string[] = [];
    const query = db.query.bind(db);
    db.query = ((sql: string, params?: unknown[]) => {
      seen.push(sql);
      return query(sql, params);
    }) as typeof db.query;
    return seen;
  }
  const plain = (prefix: string, n: number, text: string) => Array.from({ length: n }, (_, i) => doc(`${prefix}/${i}.txt`, [`${text} ${i}`]));

  test("a word in a few % of many chunks: the window is read from the newest chunks' matches, the same newest 2,000", async () => {
    const db = await newDatabase();
    const index = new PostgresFtsIndex(db);
    const collection = crypto.randomUUID();
    // 4,400 matches in 22,002 chunks, one chunk in five: past the GIN-only size, too rare for the walk.
    const middle = Array.from({ length: 22_000 }, (_, i) => doc(`mid/${i}.txt`, [i % 5 === 0 ? `one kestrel among other words ${i}` : `other words ${i}`]));
    await load(index, db, collection, [doc("old/best.txt", ["kestrel kestrel kestrel"], "Kestrel"), ...middle, doc("new/best.txt", ["kestrel kestrel kestrel"], "Kestrel")]);
    const seen = statements(db);
    const hits = await index.search(collection, "kestrel", 5);
    assert.ok(seen.some((sql) => sql.includes("bound AS MATERIALIZED")), "the window was read from a span of the newest chunks");
    assert.equal(hits[0].path, "new/best.txt");
    assert.ok(!hits.some((h) => h.path === "old/best.txt"), hits.map((h) => h.path).join(", "));
    assert.equal(hits.length, 5);
    // The same search again: the planner's estimate is kept, so it is one statement, with the same answer.
    seen.length = 0;
    assert.deepEqual(await index.search(collection, "kestrel", 5), hits);
    assert.equal(seen.length, 1, seen.map((sql) => sql.slice(0, 40)).join(" | "));
  });

  test("a collection written before another: its window is read from its own chunks, never walking past the newer collection's", async () => {
    const db = await newDatabase();
    const index = new PostgresFtsIndex(db);
    const [first, later] = [crypto.randomUUID(), crypto.randomUUID()];
    // A common word in both: past the window, so its newest 2,000 matches are walked newest first
    // (the tables too big for a sequential scan to be cheaper).
    await load(index, db, first, plain("first", 2_500, "alpha"));
    await load(index, db, later, plain("later", 25_000, "alpha"));
    const ranking: { sql: string; params: unknown[] }[] = [];
    const query = db.query.bind(db);
    db.query = ((sql: string, params?: unknown[]) => {
      if (sql.startsWith("WITH")) ranking.push({ sql, params: params ?? [] });
      return query(sql, params);
    }) as typeof db.query;
    const hits = await index.search(first, "alpha", 5);
    db.query = query;
    assert.equal(hits.length, 5);
    assert.ok(hits.every((h) => h.path.startsWith("first/")), hits.map((h) => h.path).join(", "));
    assert.equal(ranking.length, 1);
    // The rows the plan read from search_chunks and threw away: a walk of the primary key
    // backwards would pass all 25,000 of the later collection's chunks first. With only index
    // scans to choose from (a table this small may otherwise be read whole), as on a big table.
    const runner = db.createQueryRunner();
    await runner.startTransaction();
    await runner.query("SET LOCAL enable_seqscan = off");
    await runner.query("SET LOCAL enable_bitmapscan = off");
    const [{ "QUERY PLAN": plan }] = (await runner.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${ranking[0].sql}`, ranking[0].params)) as { "QUERY PLAN": { Plan: AnalyzedNode }[] }[];
    await runner.rollbackTransaction();
    await runner.release();
    const removed = (node: AnalyzedNode): number => (node["Rows Removed by Filter"] ?? 0) + (node.Plans ?? []).reduce((sum, child) => sum + removed(child), 0);
    assert.ok(removed(plan[0].Plan) < 2_500, `rows read and dropped: ${removed(plan[0].Plan)}`);
    await index.close();
  });

  test("the span's bound is reckoned from the collection's id range (no OFFSET walk), and a collection split by another's chunks keeps the same newest 2,000", async () => {
    const db = await newDatabase();
    const index = new PostgresFtsIndex(db);
    const [collection, other] = [crypto.randomUUID(), crypto.randomUUID()];
    // The collection's ids are not evenly spread: its first half, 4,000 chunks of another collection, its second half.
    // So the bound reckoned from its id range falls among the other collection's ids: the near part reads more, the same rows.
    const half = (from: number) => Array.from({ length: 11_000 }, (_, i) => doc(`mid/${from + i}.txt`, [(from + i) % 4 === 0 ? `one kestrel among other words ${i}` : `other words ${i}`]));
    await load(index, db, collection, [doc("old/best.txt", ["kestrel kestrel kestrel"], "Kestrel"), ...half(0)]);
    await load(index, db, other, plain("other", 4_000, "other words"));
    await load(index, db, collection, [...half(11_000), doc("new/best.txt", ["kestrel kestrel kestrel"], "Kestrel")]);
    const seen = statements(db);
    const hits = await index.search(collection, "kestrel", 5);
    const ranking = seen.find((sql) => sql.includes("bound AS MATERIALIZED"));
    assert.ok(ranking, "the window was read from a span of the newest chunks");
    assert.ok(!/OFFSET/i.test(ranking));
    assert.equal(hits[0].path, "new/best.txt");
    assert.ok(hits.every((h) => h.path.startsWith("mid/") || h.path === "new/best.txt"), hits.map((h) => h.path).join(", "));
    assert.equal(hits.length, 5);
  });

  test("when the newest chunks hold fewer matches than the estimate said, the window goes on to older ones", async () => {
    const db = await newDatabase();
    const index = new PostgresFtsIndex(db);
    const collection = crypto.randomUUID();
    // The matches are all old: the span of newest chunks the estimate asks for holds none of them.
    await load(index, db, collection, [
      doc("old/best.txt", ["kestrel kestrel kestrel"], "Kestrel"),
      ...plain("a", 3500, "one kestrel among other words"),
      doc("mid/best.txt", ["kestrel kestrel kestrel"], "Kestrel"),
      ...plain("b", 1000, "one kestrel among other words"),
      ...plain("c", 16_000, "other words"),
      // Found only by the prefix attempt: had the first attempt missed the older matches, this would come first.
      doc("new/kestrelling.txt", ["kestrelling kestrelling kestrelling"], "Kestrelling"),
    ]);
    const seen = statements(db);
    const hits = await index.search(collection, "kestrel", 5);
    assert.ok(seen.some((sql) => sql.includes("bound AS MATERIALIZED")), "the window was read from a span of the newest chunks");
    assert.equal(hits[0].path, "mid/best.txt");
    assert.ok(!hits.some((h) => h.path === "new/kestrelling.txt"), hits.map((h) => h.path).join(", "));
    assert.ok(!hits.some((h) => h.path === "old/best.txt"), hits.map((h) => h.path).join(", "));
    assert.equal(hits.length, 5);
  });

  test("when the span holds some of the window, a second span sized by what it found reads the rest of the newest 2,000 (not every older match)", async () => {
    const db = await newDatabase();
    const index = new PostgresFtsIndex(db);
    const collection = crypto.randomUUID();
    // 5,001 matches in ~21,000 chunks: the span (~half the collection) holds only the sparse newest
    // region's ~600. The newest 2,000 matches end at mid/best.txt; old/best.txt is the 2,001st.
    const sparse = Array.from({ length: 17_000 }, (_, i) => doc(`new/${i}.txt`, [i % 17 === 0 ? `one kestrel among other words ${i}` : `other words ${i}`]));
    await load(index, db, collection, [
      ...plain("old", 3000, "one kestrel among other words"),
      doc("old/best.txt", ["kestrel kestrel kestrel"], "Kestrel"),
      doc("mid/best.txt", ["kestrel kestrel kestrel"], "Kestrel"),
      ...plain("mid", 999, "one kestrel among other words"),
      ...sparse,
    ]);
    const ranking: { sql: string; params: unknown[] }[] = [];
    const query = db.query.bind(db);
    db.query = ((sql: string, params?: unknown[]) => {
      if (sql.includes("bound AS MATERIALIZED")) ranking.push({ sql, params: params ?? [] });
      return query(sql, params);
    }) as typeof db.query;
    const hits = await index.search(collection, "kestrel", 5);
    db.query = query;
    assert.equal(ranking.length, 1, "the window was read from a span of the newest chunks");
    assert.equal(hits[0].path, "mid/best.txt");
    assert.ok(!hits.some((h) => h.path === "old/best.txt"), hits.map((h) => h.path).join(", "));
    assert.equal(hits.length, 5);
    // Where the rows came from: the span, then the second span; the walk of all older matches read none.
    const [{ "QUERY PLAN": plan }] = (await db.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${ranking[0].sql}`, ranking[0].params)) as { "QUERY PLAN": { Plan: CteNode }[] }[];
    const rows = (node: CteNode): Record<string, number> =>
      Object.assign({}, node["Subplan Name"]?.startsWith("CTE ") ? { [node["Subplan Name"].slice(4)]: node["Actual Rows"] } : {}, ...(node.Plans ?? []).map(rows));
    const read = rows(plan[0].Plan);
    assert.ok(read.exact_near > 0 && read.exact_near < 2000, JSON.stringify(read));
    assert.equal(read.exact_near + read.exact_far, 2000, JSON.stringify(read));
  });

  test("a prefix attempt whose other words are rare looks them up and checks the prefix on their rows, with the same answers", async () => {
    const db = await newDatabase();
    const index = new PostgresFtsIndex(db);
    const collection = crypto.randomUUID();
    // Words beginning "pel" in every chunk (the prefix's index entries: all 17,000), "kestrel osprey" in four.
    const filler = Array.from({ length: 17_000 }, (_, i) => doc(`fill/${i}.txt`, [`pelagic pellet ${i % 2 ? "pelmet" : "pelvis"} words ${i}`]));
    await load(index, db, collection, [
      doc("exact.txt", ["a kestrel and an osprey by the pelican"]),
      doc("stem.txt", ["kestrels and ospreys among pelicans"]),
      doc("no-prefix.txt", ["a kestrel and an osprey"]),
      doc("folder/exact.txt", ["kestrel osprey pelican again"]),
      doc("both.txt", ["pelagic pelican"]),
      ...filler,
    ]);
    const seen = statements(db);
    const ranking = () => seen.filter((sql) => sql.startsWith("WITH"));
    // "pel" is no word: the first attempt finds nothing, the prefix attempt finds the three with a "pel..." word.
    const hits = await index.search(collection, "kestrel osprey pel", 10);
    assert.deepEqual(hits.map((h) => h.exact), [true, true, false]);
    assert.deepEqual(hits.map((h) => [h.path, h.matched]).sort(), [["exact.txt", "all"], ["folder/exact.txt", "all"], ["stem.txt", "all"]]);
    assert.equal(hits[2].path, "stem.txt");
    assert.equal(ranking().length, 2, "all words, then the prefix");
    assert.ok(ranking()[1].includes("ts_match_vq(c.tsv, ") && ranking()[1].includes("ts_match_vq(c.tsv_exact, "), "both tiers checked the prefix on the rare words' rows");
    // A folder filter (no span) takes the same way.
    seen.length = 0;
    assert.deepEqual((await index.search(collection, "kestrel osprey pel", 10, { folder: "folder" })).map((h) => h.path), ["folder/exact.txt"]);
    assert.ok(ranking().at(-1)!.includes("ts_match_vq("));
    // A prefix rarer than the other word: the prefix is looked up as before.
    seen.length = 0;
    assert.deepEqual((await index.search(collection, "pelagic pelica", 5)).map((h) => [h.path, h.matched]), [["both.txt", "all"]]);
    assert.ok(!ranking().some((sql) => sql.includes("ts_match_vq(")));
  });

  test("a search is one statement per attempt: both tiers, the per-document cap and the snippets of the chunks answered only", async () => {
    const db = await newDatabase();
    const index = new PostgresFtsIndex(db);
    const collection = crypto.randomUUID();
    // Exact "gannet" in three chunks of long.txt; the stem only ("gannets") in its other three and in short.txt.
    await index.upsertDocument(collection, doc("long.txt", ["gannet colony one", "gannet colony two", "gannet colony three", "gannets four", "gannets five", "gannets six"]));
    await index.upsertDocument(collection, doc("short.txt", ["gannets over the cliffs"]));
    await index.upsertDocument(collection, doc("other.txt", ["puffins only"]));
    await index.search(collection, "puffin", 5); // the first search of a small collection learns its size (one EXPLAIN)
    const seen = statements(db);
    const capped = await index.search(collection, "gannet", 5, { perDocument: 2 });
    assert.equal(seen.length, 1, seen.map((sql) => sql.slice(0, 40)).join(" | "));
    // The cap counts both tiers: long.txt's two best exact chunks, then short.txt from the stemmed tier.
    assert.deepEqual(
      capped.map((h) => [h.path, h.exact]),
      [
        ["long.txt", true],
        ["long.txt", true],
        ["short.txt", false],
      ],
    );
    assert.ok(capped.every((h) => h.snippet.includes("gannet")), capped.map((h) => h.snippet).join(" | "));
    // Without a cap the stemmed tier fills what the exact tier left: three exact, then two by stem.
    const page = await index.search(collection, "gannet", 5);
    assert.deepEqual(page.map((h) => h.exact), [true, true, true, false, false]);
    // The exact tier alone fills a page of three: the stemmed tier is not read, and nothing it has is answered.
    assert.deepEqual((await index.search(collection, "gannet", 3)).map((h) => h.exact), [true, true, true]);
    // A query found only by its fallback: one statement per attempt (all words, then the prefix, then any word).
    seen.length = 0;
    assert.deepEqual((await index.search(collection, "puffins albatross", 5)).map((h) => [h.path, h.matched]), [["other.txt", "any"]]);
    assert.equal(seen.length, 3, seen.map((sql) => sql.slice(0, 40)).join(" | "));
  });

  /** The rows search_chunks had at its last ANALYZE (-1: never analyzed). */
  async function analyzedRows(db: DataSource): Promise<number> {
    const [row] = (await db.query("SELECT reltuples FROM pg_class WHERE oid = 'search_chunks'::regclass")) as { reltuples: number }[];
    return Number(row.reltuples);
  }
  test("the search tables get statistics as this process writes them: past the floor, then each time the table has doubled", async () => {
    const db = await newDatabase();
    const index = new PostgresFtsIndex(db, { analyzeFloor: 100 });
    const collection = crypto.randomUUID();
    const settled = async () => {
      await index.statisticsSettled();
      return analyzedRows(db);
    };
    await index.upsertDocuments(collection, plain("a", 60, "words"));
    assert.equal(await settled(), -1, "60 chunks: never analyzed yet");
    await index.upsertDocuments(collection, plain("b", 60, "words"));
    assert.equal(await settled(), 120, "past the floor of 100: analyzed");
    await index.upsertDocuments(collection, plain("c", 100, "words"));
    assert.equal(await settled(), 120, "100 more of a table of 120: not yet");
    const staged = await index.stageDocument(collection, { sourceId: SOURCE, path: "big/stream.log", title: "stream.log", size: 10, modifiedAt: new Date(), version: null });
    await staged.addChunks(Array.from({ length: 30 }, (_, chunkIndex) => ({ chunkIndex, text: `streamed ${chunkIndex}` })));
    await staged.commit();
    assert.equal(await settled(), 250, "130 more: the table has doubled since, analyzed again");
    assert.equal((await index.search(collection, "streamed", 3)).length, 3);
    await index.close();
  });

  test("a due ANALYZE runs by itself when the writes pause, or at once when they go on without a pause", async () => {
    const pausing = await newDatabase();
    const index = new PostgresFtsIndex(pausing, { analyzeFloor: 100, analyzeQuietMs: 300 });
    await index.upsertDocuments(crypto.randomUUID(), plain("a", 150, "words"));
    assert.equal(await analyzedRows(pausing), -1, "not while the writes may go on");
    await waitFor(async () => (await analyzedRows(pausing)) === 150, "the ANALYZE after the pause");
    await index.close();

    const unpaused = await newDatabase();
    const busy = new PostgresFtsIndex(unpaused, { analyzeFloor: 100, analyzeQuietMs: 600_000 });
    await busy.upsertDocuments(crypto.randomUUID(), plain("a", 400, "words"));
    await waitFor(async () => (await analyzedRows(unpaused)) === 400, "the ANALYZE at four times what was due");
    await busy.close();
  });

  test("the counts of several collections asked at once (a listing) are one statement; an empty collection counts zero", async () => {
    const db = await newDatabase();
    const index = new PostgresFtsIndex(db);
    const [a, b, empty] = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
    await index.upsertDocuments(a, [doc("one.txt", ["x", "y"]), doc("two.txt", ["z"])]);
    await index.upsertDocuments(b, [doc("three.txt", ["w"])]);
    const seen = statements(db);
    const stats = await Promise.all([a, b, empty, a].map((id) => index.stats(id)));
    assert.equal(seen.length, 1, seen.join(" | "));
    assert.deepEqual(
      stats.map((s) => [s.documentCount, s.chunkCount, s.indexStatus]),
      [
        [2, 3, "ok"],
        [1, 1, "ok"],
        [0, 0, "ok"],
        [2, 3, "ok"],
      ],
    );
  });
});
