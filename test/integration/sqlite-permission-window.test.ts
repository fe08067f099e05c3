import { after, test } from "node:test";
import assert from "node:assert/strict";
import crypto from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import Database from "better-sqlite3";
import { SqliteFtsIndex } from "../../server/search/sqlite";
import { aclIdOf, type FileAcl } from "../../server/search/stored-acl";
import type { DocumentInput, SearchOptions } from "../../server/search/search-index";

// SQLite's permission filter after the window (docs/decisions/0487-permission-filter-after-the-window.md):
// the window is the newest matches whatever the caller may read, the page its best readable rows,
// and a full window short of readable rows is ranked again with the permissions in the walk.

const SERVER = "fs.example";
const SOURCE = "0f6b8a3e-7c1d-4e2b-9a5f-1b2c3d4e5f60";
const OPEN_SHARE = [{ kind: "allow" as const, inherited: false, mask: 0x120089, sid: "S-1-1-0" }];
/** Four ACLs, each allowing one group. */
const ACLS: FileAcl[] = [2001, 2002, 2003, 2004].map((rid) => ({ file: [{ kind: "allow", inherited: false, mask: 0x120089, sid: `S-1-5-21-1-2-3-${rid}` }], share: OPEN_SHARE }));
const idOf = (acl: FileAcl) => aclIdOf(SERVER, acl);

const tempDirs: string[] = [];
const closers: Array<() => Promise<void>> = [];
after(async () => {
  for (const close of closers) await close();
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
});

/** A collection file whose ranking window is `window` matches (RankingLimits lowered, as sqlite-fts-index.test.ts does). */
function windowedIndex(window: number): { index: SqliteFtsIndex; collection: string; file: string } {
  const dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "sluice-permwin-")), "indexes");
  tempDirs.push(path.dirname(dir));
  const index = new SqliteFtsIndex({ dir, ranking: { window } });
  closers.push(() => index.close());
  const collection = crypto.randomUUID();
  return { index, collection, file: path.join(dir, `${collection}.db`) };
}

function doc(name: string, texts: string[], acl: FileAcl | null): DocumentInput {
  return {
    sourceId: SOURCE,
    path: `share/${name}`,
    title: name,
    size: texts.join("").length,
    modifiedAt: new Date("2025-03-01T10:00:00Z"),
    version: null,
    permissions: acl ? { server: SERVER, acl, changedAt: null } : null,
    chunks: texts.map((text, chunkIndex) => ({ chunkIndex, text })),
  };
}

/** Text with `word` in it `times` times, in a body of other words, so chunks score apart. */
const textWith = (word: string, times: number, i: number) => `${Array.from({ length: times }, () => word).join(" ")} notes on the coast ${i} and its weather`;

/**
 * The page worked out from the file itself, apart from the ranking code: the newest `window`
 * exact matches of `word`, by bm25 (the engine's weights) then newest, the readable ones only,
 * at most `perDocument` per document, the best `limit`.
 */
function bruteForce(file: string, word: string, window: number, readable: Set<string>, limit: number, perDocument?: number): Array<[string, number, number]> {
  const db = new Database(file, { readonly: true });
  try {
    const newest = db
      .prepare("SELECT rowid, bm25(chunks_exact, 5.0, 2.0, 1.0) AS bm25 FROM chunks_exact WHERE chunks_exact MATCH ? ORDER BY rowid DESC LIMIT ?")
      .all(`"${word}"`, window) as Array<{ rowid: number; bm25: number }>;
    const place = db.prepare("SELECT d.path, d.acl, c.chunk_index FROM chunks c JOIN documents d ON d.id = c.document_id WHERE c.rowid = ?");
    const rows = newest
      .map((row) => ({ ...row, ...(place.get(row.rowid) as { path: string; acl: string | null; chunk_index: number }) }))
      .filter((row) => row.acl === null || readable.has(row.acl))
      .sort((a, b) => a.bm25 - b.bm25 || b.rowid - a.rowid);
    const perPath = new Map<string, number>();
    const kept = rows.filter((row) => {
      const n = (perPath.get(row.path) ?? 0) + 1;
      perPath.set(row.path, n);
      return perDocument === undefined || n <= perDocument;
    });
    return kept.slice(0, limit).map((row) => [row.path, row.chunk_index, -row.bm25]);
  } finally {
    db.close();
  }
}

/** The SQL of every statement the index prepares on its (only) open file from now on. */
function preparedSql(index: SqliteFtsIndex): string[] {
  const [db] = (index as unknown as { files: { open: Map<string, Database.Database> } }).files.open.values();
  const seen: string[] = [];
  const prepare = db.prepare.bind(db);
  db.prepare = ((sql: string) => {
    seen.push(sql);
    return prepare(sql);
  }) as typeof db.prepare;
  return seen;
}

/** Whether a statement ranks a window walked with the permission condition in it (the fallback; the stemmed tier's count is not a ranking). */
const walksWithPermissions = (sql: string) => sql.includes("WITH candidates") && sql.includes("json_each");

const pageOf = async (index: SqliteFtsIndex, collection: string, word: string, limit: number, options: SearchOptions) =>
  (await index.search(collection, word, limit, options)).map((hit): [string, number, number] => [hit.path, hit.chunkIndex, hit.score]);

test("SQLite: a caller who may read half the documents gets only readable hits, the best readable rows of the window, without the permissions in the walk", async () => {
  const window = 40;
  const { index, collection, file } = windowedIndex(window);
  // 80 documents of two chunks (160 matches, a full window), the ACLs in turn; a plain one (no ACL) every tenth.
  await index.upsertDocuments(
    collection,
    Array.from({ length: 80 }, (_, i) => doc(`d${String(i).padStart(2, "0")}.txt`, [textWith("harbour", 1 + ((i * 7) % 5), i), textWith("harbour", 1 + ((i * 3) % 4), i)], i % 10 === 9 ? null : ACLS[i % 4])),
  );
  await index.stats(collection);
  const seen = preparedSql(index);
  const half = new Set([idOf(ACLS[0]), idOf(ACLS[1])]);
  const quarter = new Set([idOf(ACLS[3])]);
  for (const [readable, limit] of [[half, 5], [half, 3], [quarter, 3], [quarter, 6]] as const) {
    const options = { readableAcls: [...readable] };
    assert.deepEqual(await pageOf(index, collection, "harbour", limit, options), bruteForce(file, "harbour", window, readable, limit), `${readable.size} ACLs, top ${limit}`);
    // A cap of one chunk per document: the cap applies among the readable rows as in a filtered walk.
    assert.deepEqual(await pageOf(index, collection, "harbour", limit, { ...options, perDocument: 1 }), bruteForce(file, "harbour", window, readable, limit, 1), `${readable.size} ACLs, top ${limit}, one per document`);
  }
  assert.ok(!seen.some(walksWithPermissions), "the window was walked without the permission condition");
  // Spread (firstPerDocument): the same rows as a cap when the page fills with each document's first chunk.
  const spread = await pageOf(index, collection, "harbour", 5, { readableAcls: [...half], firstPerDocument: 1 });
  assert.deepEqual(spread, bruteForce(file, "harbour", window, half, 5, 1));
  // Nothing readable (and no plain document among the matches either would make it all plain ones): only documents without an ACL.
  const plainOnly = await index.search(collection, "harbour", 5, { readableAcls: [] });
  assert.ok(plainOnly.length === 5 && plainOnly.every((hit) => Number(hit.path.slice(7, 9)) % 10 === 9), "only the plain documents");
});

test("SQLite: a caller who may read only documents older than the window's matches still gets top_k readable hits (ranked again with the permissions in the walk)", async () => {
  const window = 10;
  const { index, collection, file } = windowedIndex(window);
  // Older: 12 documents the caller may read. Newer: 20 they may not, more matches than the window holds.
  await index.upsertDocuments(collection, Array.from({ length: 12 }, (_, i) => doc(`old-${i}.txt`, [textWith("lantern", 1 + (i % 3), i)], ACLS[0])));
  await index.upsertDocuments(collection, Array.from({ length: 20 }, (_, i) => doc(`new-${i}.txt`, [textWith("lantern", 3, i)], ACLS[1])));
  await index.stats(collection);
  const seen = preparedSql(index);
  const readable = new Set([idOf(ACLS[0])]);
  const hits = await pageOf(index, collection, "lantern", 5, { readableAcls: [...readable] });
  assert.equal(hits.length, 5);
  assert.ok(hits.every(([p]) => p.startsWith("share/old-")));
  // What the walk with the filter ranks: the newest `window` readable matches (here all 10 of the newest old ones).
  const walked = bruteForceReadableWindow(file, "lantern", window, readable, 5);
  assert.deepEqual(hits, walked);
  assert.ok(seen.some(walksWithPermissions), "the short page from a full window was ranked again with the permissions in the walk");
  // With a cap of one per document too.
  const capped = await pageOf(index, collection, "lantern", 5, { readableAcls: [...readable], perDocument: 1 });
  assert.deepEqual(capped, walked, "one chunk per document already");
});

/** The newest `window` readable matches, ranked (what a walk with the permissions in it ranks). */
function bruteForceReadableWindow(file: string, word: string, window: number, readable: Set<string>, limit: number): Array<[string, number, number]> {
  // Every match readable-filtered first, then the newest `window`: bruteForce() over a window as deep as all the matches, cut by age.
  const all = bruteForce(file, word, Number.MAX_SAFE_INTEGER, readable, Number.MAX_SAFE_INTEGER);
  const db = new Database(file, { readonly: true });
  try {
    const rowid = db.prepare("SELECT c.rowid FROM chunks c JOIN documents d ON d.id = c.document_id WHERE d.path = ? AND c.chunk_index = ?").pluck();
    const withAge = all.map((hit) => ({ hit, rowid: rowid.get(hit[0], hit[1]) as number }));
    const newest = new Set([...withAge].sort((a, b) => b.rowid - a.rowid).slice(0, window).map((row) => row.rowid));
    return withAge.filter((row) => newest.has(row.rowid)).slice(0, limit).map((row) => row.hit);
  } finally {
    db.close();
  }
}

test("SQLite: a window that is not full returns every readable match, with no second ranking", async () => {
  const { index, collection, file } = windowedIndex(1000);
  await index.upsertDocuments(
    collection,
    Array.from({ length: 60 }, (_, i) => doc(`d${i}.txt`, [textWith("beacon", 1 + (i % 4), i)], i % 7 === 0 ? null : ACLS[i % 3])),
  );
  await index.stats(collection);
  const seen = preparedSql(index);
  const readable = new Set([idOf(ACLS[2])]);
  const hits = await pageOf(index, collection, "beacon", 100, { readableAcls: [...readable] });
  const expected = bruteForce(file, "beacon", 1000, readable, 100);
  const readableCount = Array.from({ length: 60 }, (_, i) => i).filter((i) => i % 7 === 0 || i % 3 === 2).length;
  assert.equal(expected.length, readableCount);
  assert.deepEqual(hits, expected);
  assert.ok(!seen.some(walksWithPermissions), "no walk with the permissions: the window held every match");
});

test("SQLite: permissions with a folder filter: the folder in the walk, the permissions on the window's rows", async () => {
  const window = 8;
  const { index, collection } = windowedIndex(window);
  await index.upsertDocuments(collection, [
    ...Array.from({ length: 10 }, (_, i) => doc(`inside/${i}.txt`, [textWith("pier", 1 + (i % 3), i)], ACLS[i % 2])),
    ...Array.from({ length: 10 }, (_, i) => doc(`outside/${i}.txt`, [textWith("pier", 4, i)], ACLS[0])),
  ]);
  const hits = await index.search(collection, "pier", 10, { folder: "share/inside", readableAcls: [idOf(ACLS[0])] });
  assert.deepEqual(hits.map((hit) => hit.path).sort(), [0, 2, 4, 6, 8].map((i) => `share/inside/${i}.txt`));
});

test("SQLite: a common word in an AND checked on the best rows only: with permissions, each best row's document is probed too, and the page is the readable part of the search without them", async () => {
  const dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "sluice-permwin-")), "indexes");
  tempDirs.push(path.dirname(dir));
  // "otter" in every chunk (common from 10 chunks on), "heron" in a few: the rarer word's matches fit the window.
  const index = new SqliteFtsIndex({ dir, ranking: { window: 1000, commonFrom: 10, commonSample: 5 } });
  closers.push(() => index.close());
  const collection = crypto.randomUUID();
  await index.upsertDocuments(
    collection,
    Array.from({ length: 30 }, (_, i) =>
      doc(`d${i}.txt`, i % 3 === 0 ? [`otter ${textWith("heron", 1 + (i % 4), i)}`, `otter heron ${i}`] : [`otter notes ${i} of the coast`], ACLS[i % 2]),
    ),
  );
  await index.stats(collection);
  const seen = preparedSql(index);
  const readable = idOf(ACLS[0]);
  const aclOfPath = new Map(Array.from({ length: 30 }, (_, i) => [`share/d${i}.txt`, idOf(ACLS[i % 2])]));
  for (const perDocument of [undefined, 1]) {
    const everything = await pageOf(index, collection, "otter heron", 100, { perDocument });
    const expected = everything.filter(([p]) => aclOfPath.get(p) === readable).slice(0, 4);
    assert.ok(expected.length === 4 && everything.length > expected.length, "some heron chunks are not readable");
    assert.deepEqual(await pageOf(index, collection, "otter heron", 4, { perDocument, readableAcls: [readable] }), expected, `perDocument ${perDocument}`);
  }
  assert.ok(seen.includes("SELECT 1 FROM chunks_exact WHERE chunks_exact MATCH ? AND rowid = ?"), "the common word checked on the best rows");
  assert.ok(!seen.some(walksWithPermissions));
});
