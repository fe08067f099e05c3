import { describe, test } from "node:test";
import assert from "node:assert/strict";
import crypto from "node:crypto";
import type { DataSource } from "typeorm";
import { EVERYONE_SID } from "../../server/access/windows-acl";
import { PostgresFtsIndex } from "../../server/search/postgres";
import { CONFIG } from "../../server/search/postgres/postgres-fts-schema";
import { RANK_WINDOW } from "../../server/search/postgres/postgres-fts-window";
import type { DocumentInput } from "../../server/search/search-index";
import { aclIdOf, type FileAcl } from "../../server/search/stored-acl";
import { postgresBinDir } from "../fixtures/postgres";
import { freshPostgresDatabases } from "../fixtures/postgres-databases";

// PostgreSQL's permission filter on a tier's window (docs/decisions/0488-permission-filter-after-the-window-postgresql.md):
// the window is the newest RANK_WINDOW matches whatever the caller may read, the page the best
// readable rows of it, checked here against a brute force over the tables; a full window with
// too few readable rows is ranked again over the newest readable matches.

const SOURCE = "5c8e1f0a-2b3d-4e6f-8a9b-0c1d2e3f4a5b";
const SERVER = "fs.example";
/** Twenty ACLs, each allowing one group; the caller is in the even ones' groups. */
const ACLS: FileAcl[] = Array.from({ length: 20 }, (_, k) => ({
  file: [{ kind: "allow", inherited: false, mask: 0x120089, sid: `S-1-5-21-7-7-7-${2000 + k}` }],
  share: [{ kind: "allow", inherited: false, mask: 0x120089, sid: EVERYONE_SID }],
}));
const READABLE = ACLS.filter((_, k) => k % 2 === 0).map((acl) => aclIdOf(SERVER, acl));
const UNREADABLE = 1;
const READABLE_ACL = 0;

/** A one-chunk document under ACL `acl` (an index into ACLS; null: no permissions, readable by all). */
function doc(path: string, text: string, acl: number | null, title = path.split("/").at(-1)!): DocumentInput {
  return {
    sourceId: SOURCE,
    path,
    title,
    size: text.length,
    modifiedAt: new Date("2024-05-01T10:00:00.000Z"),
    version: null,
    permissions: acl === null ? null : { server: SERVER, acl: ACLS[acl], changedAt: null },
    chunks: [{ chunkIndex: 0, text }],
  };
}

/** `word` k times among other words: scores that differ, and ties. */
const matching = (word: string, i: number) => `${Array.from({ length: 1 + ((i * 7) % 5) }, () => word).join(" ")} among other words ${i}`;

/** A CTE node of EXPLAIN (ANALYZE, FORMAT JSON)'s plan. */
interface CteNode {
  "Subplan Name"?: string;
  "Actual Rows": number;
  Plans?: CteNode[];
}

describe("PostgreSQL: the permission filter on the window's rows", { skip: postgresBinDir() ? false : "PostgreSQL is not installed" }, () => {
  const newDatabase = freshPostgresDatabases();

  async function load(index: PostgresFtsIndex, db: DataSource, collection: string, docs: DocumentInput[]) {
    for (let i = 0; i < docs.length; i += 1000) await index.upsertDocuments(collection, docs.slice(i, i + 1000));
    await db.query("ANALYZE search_chunks");
    await db.query("ANALYZE search_documents");
  }

  /** Records the ranking statements (and their parameters) the index runs. */
  function rankings(db: DataSource): { sql: string; params: unknown[] }[] {
    const seen: { sql: string; params: unknown[] }[] = [];
    const query = db.query.bind(db);
    db.query = ((sql: string, params?: unknown[]) => {
      if (sql.startsWith("WITH")) seen.push({ sql, params: params ?? [] });
      return query(sql, params);
    }) as typeof db.query;
    return seen;
  }

  /** The rows each CTE of a ranking statement produced, run again under EXPLAIN ANALYZE. */
  async function cteRows(db: DataSource, ranking: { sql: string; params: unknown[] }): Promise<Record<string, number>> {
    const [{ "QUERY PLAN": plan }] = (await db.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${ranking.sql}`, ranking.params)) as { "QUERY PLAN": { Plan: CteNode }[] }[];
    const rows = (node: CteNode): Record<string, number> =>
      Object.assign({}, node["Subplan Name"]?.startsWith("CTE ") ? { [node["Subplan Name"].slice(4)]: node["Actual Rows"] } : {}, ...(node.Plans ?? []).map(rows));
    return rows(plan[0].Plan);
  }

  /**
   * The brute force: every chunk matching `word` with its score (the ranking's weights), the
   * newest RANK_WINDOW of them (or of the readable ones: `readableWindow`), the readable ones of
   * those, best first (ties by id): their paths.
   */
  async function bruteForce(db: DataSource, collection: string, word: string, limit: number, readableWindow = false): Promise<string[]> {
    const rows = (await db.query(
      `SELECT c.id::bigint AS id, d.path, d.acl, ts_rank('{0.1, 0.2, 0.4, 1.0}', c.tsv, to_tsquery('${CONFIG}', $2)) AS score
       FROM search_chunks c JOIN search_documents d ON d.id = c.document_id WHERE c.collection_id = $1 AND c.tsv @@ to_tsquery('${CONFIG}', $2)`,
      [collection, word],
    )) as { id: string; path: string; acl: string | null; score: number }[];
    const readable = (row: { acl: string | null }) => row.acl === null || READABLE.includes(row.acl);
    const newestFirst = rows.map((row) => ({ ...row, id: BigInt(row.id) })).sort((a, b) => (a.id > b.id ? -1 : a.id < b.id ? 1 : 0));
    const window = (readableWindow ? newestFirst.filter(readable) : newestFirst).slice(0, RANK_WINDOW);
    return window
      .filter(readable)
      .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
      .slice(0, limit)
      .map((row) => row.path);
  }

  test("a caller who may read half the documents gets the best readable rows of the window without permissions (its span too), and no fallback", async () => {
    const db = await newDatabase();
    const index = new PostgresFtsIndex(db);
    const collection = crypto.randomUUID();
    // 4,400 matches in 22,000 chunks, as the span test of postgres-fts-index.test.ts: the window is read from a span.
    // Among the matches past the newest 2,000 (but within the newest 2,000 readable ones), the best match, readable.
    const chunk = (i: number) => doc(`mid/${i}.txt`, i % 5 === 0 ? matching("kestrel", i / 5) : `other words ${i}`, i % 11 === 0 ? null : i % 20);
    const older = Array.from({ length: 9_000 }, (_, i) => chunk(i));
    const newer = Array.from({ length: 13_000 }, (_, i) => chunk(9_000 + i));
    await load(index, db, collection, [...older, doc("mid/best.txt", "kestrel kestrel kestrel kestrel kestrel kestrel", READABLE_ACL, "Kestrel"), ...newer]);
    const seen = rankings(db);
    const hits = await index.search(collection, "kestrel", 10, { readableAcls: READABLE });
    assert.equal(seen.length, 1);
    assert.ok(seen[0].sql.includes("bound AS MATERIALIZED"), "the window was read from a span of the newest chunks, as without permissions");
    assert.deepEqual(
      hits.map((h) => h.path),
      await bruteForce(db, collection, "kestrel", 10),
    );
    // The ranking change: the window no longer skips unreadable matches, so an older readable best match is left out.
    assert.ok(!hits.some((h) => h.path === "mid/best.txt"));
    assert.ok((await bruteForce(db, collection, "kestrel", 10, true)).includes("mid/best.txt"), "the filter in the walk would have found it");
    const read = await cteRows(db, seen[0]);
    assert.equal(read.exact_fallback, 0, JSON.stringify(read));
    // Without permissions: the same window, so the readable hits are among its best rows in the same order.
    const all = (await index.search(collection, "kestrel", 100)).map((h) => h.path);
    assert.deepEqual(
      all.filter((p) => hits.some((h) => h.path === p)),
      hits.map((h) => h.path),
    );
  });

  test("a caller who may read only documents older than the newest 2,000 matches still gets a full page (the fallback), in both tiers", async () => {
    const db = await newDatabase();
    const index = new PostgresFtsIndex(db);
    const collection = crypto.randomUUID();
    const readableOld = Array.from({ length: 30 }, (_, i) => doc(`old/${i}.txt`, matching("kestrel", i), i % 3 === 0 ? null : READABLE_ACL));
    const unreadableNew = Array.from({ length: RANK_WINDOW + 400 }, (_, i) => doc(`new/${i}.txt`, matching("kestrel", i), UNREADABLE));
    await load(index, db, collection, [...readableOld, ...unreadableNew]);
    const seen = rankings(db);
    const hits = await index.search(collection, "kestrel", 10, { readableAcls: READABLE });
    assert.equal(hits.length, 10);
    assert.ok(hits.every((h) => h.path.startsWith("old/") && h.exact));
    assert.deepEqual(
      hits.map((h) => h.path),
      await bruteForce(db, collection, "kestrel", 10, true),
    );
    const read = await cteRows(db, seen[0]);
    assert.equal(read.exact_fallback, 30, JSON.stringify(read));
    // "kestrels" has no exact match: the stemmed tier's full window is unreadable too, and ranked again.
    seen.length = 0;
    const stemmed = await index.search(collection, "kestrels", 10, { readableAcls: READABLE });
    assert.equal(stemmed.length, 10);
    assert.ok(stemmed.every((h) => h.path.startsWith("old/") && !h.exact));
    assert.equal((await cteRows(db, seen[0])).rest_fallback, 30);
    // A caller with no readable ACL: the documents without permissions only, found by the fallback too.
    assert.deepEqual(
      (await index.search(collection, "kestrel", 10, { readableAcls: [] })).map((h) => h.path).sort(),
      readableOld
        .filter((d) => !d.permissions)
        .map((d) => d.path)
        .sort(),
    );
    // Without permissions the newest 2,000 are ranked, none of them readable by that caller.
    assert.ok((await index.search(collection, "kestrel", 10)).every((h) => h.path.startsWith("new/")));
  });

  test("a window that is not full holds every match: every readable one comes back, with no fallback, beside a folder filter too", async () => {
    const db = await newDatabase();
    const index = new PostgresFtsIndex(db);
    const collection = crypto.randomUUID();
    const docs = Array.from({ length: 80 }, (_, i) => doc(`${i % 2 ? "a" : "b"}/${i}.txt`, matching("kestrel", i), i % 7 === 0 ? null : i % 20));
    await load(index, db, collection, [...docs, ...Array.from({ length: 200 }, (_, i) => doc(`c/${i}.txt`, `other words ${i}`, UNREADABLE))]);
    const seen = rankings(db);
    const hits = await index.search(collection, "kestrel", 100, { readableAcls: READABLE });
    const expected = await bruteForce(db, collection, "kestrel", 100);
    assert.equal(expected.length, docs.filter((d) => !d.permissions || READABLE.includes(aclIdOf(SERVER, d.permissions.acl))).length);
    assert.deepEqual(
      hits.map((h) => h.path),
      expected,
    );
    assert.equal((await cteRows(db, seen[0])).exact_fallback, 0);
    // One readable ACL: its three documents and the twelve without permissions, fewer than the page of twenty.
    const few = await index.search(collection, "kestrel", 20, { readableAcls: [READABLE[1]] });
    assert.equal(few.length, 15);
    assert.deepEqual(
      few.map((h) => h.path).sort(),
      docs
        .filter((d) => !d.permissions || d.permissions.acl === ACLS[2])
        .map((d) => d.path)
        .sort(),
    );
    // A folder filter stays in the walk; the readable condition on its window's rows.
    const inFolder = await index.search(collection, "kestrel", 100, { readableAcls: READABLE, folder: "a" });
    assert.deepEqual(
      inFolder.map((h) => h.path),
      expected.filter((p) => p.startsWith("a/")),
    );
  });
});
