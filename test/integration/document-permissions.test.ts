import assert from "node:assert/strict";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, test } from "node:test";
import type { DataSource } from "typeorm";
import { DocumentPermissions } from "../../server/access/document-permissions";
import { EVERYONE_SID } from "../../server/access/windows-acl";
import { aclIdOf, type Ace, type FileAcl } from "../../server/search/stored-acl";
import { openDatabase } from "../../server/data/data-source";
import { PostgresFtsIndex } from "../../server/search/postgres";
import type { DocumentInput, DocumentPermissions as Permissions, ReadableFilter, SearchIndex } from "../../server/search/search-index";
import { SqliteFtsIndex } from "../../server/search/sqlite";
import { ThreadedSqliteIndex } from "../../server/search/threaded-index";
import { postgresBinDir, sharedPostgres } from "../fixtures/postgres";

// The file server's permissions in the index itself, on every engine: documents keep their
// ACLs (each distinct one stored once), and searches, listings and counts hold only what the
// caller's SIDs may read, as part of the query (a full page of readable hits when that many exist).

const SERVER = "fs.example";
const ALICE = "S-1-5-21-1-2-3-1001";
const BOB = "S-1-5-21-1-2-3-1002";
const HR = "S-1-5-21-1-2-3-2001";
const READ = 0x120089;
const allow = (sid: string, inherited = false): Ace => ({ kind: "allow", inherited, mask: READ, sid });
const deny = (sid: string, inherited = false): Ace => ({ kind: "deny", inherited, mask: READ, sid });
const OPEN_SHARE = [allow(EVERYONE_SID)];
const ACLS = {
  hrOnly: { file: [allow(HR)], share: OPEN_SHARE },
  aliceDeniedHrAllowed: { file: [deny(ALICE), allow(HR)], share: OPEN_SHARE },
  everyone: { file: [allow(EVERYONE_SID)], share: OPEN_SHARE },
  writeOnly: { file: [{ kind: "allow", inherited: false, mask: 0x2, sid: ALICE }], share: OPEN_SHARE },
  shareDeniesAlice: { file: [allow(ALICE)], share: [deny(ALICE), allow(EVERYONE_SID)] },
} satisfies Record<string, FileAcl>;

const SOURCE = "0f6b8a3e-7c1d-4e2b-9a5f-1b2c3d4e5f60";
const PLAIN_SOURCE = "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d";

const tempDirs: string[] = [];
const closers: Array<() => Promise<void>> = [];
// The threaded index's writer thread is unref'd (an idle one must not hold a process): this file's awaits on it need the loop held.
const holdLoop = setInterval(() => undefined, 60_000);
after(async () => {
  clearInterval(holdLoop);
  for (const close of closers) await close();
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
});

function indexDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sluice-perm-"));
  tempDirs.push(dir);
  return path.join(dir, "indexes");
}

let pg: Promise<PostgresFtsIndex> | null = null;
const ENGINES: Array<{ name: string; skip: string | false; open(): Promise<SearchIndex> }> = [
  {
    name: "SQLite FTS5",
    skip: false,
    async open() {
      const index = new SqliteFtsIndex({ dir: indexDir() });
      closers.push(() => index.close());
      return index;
    },
  },
  {
    name: "the desktop's threaded SQLite index",
    skip: false,
    async open() {
      const index = new ThreadedSqliteIndex({ dir: indexDir(), readers: { threads: 1, queueLimit: 8 }, searchCacheBytes: 1024 * 1024 });
      closers.push(() => index.close());
      return index;
    },
  },
  {
    name: "PostgreSQL full-text",
    skip: postgresBinDir() ? false : "PostgreSQL is not installed",
    async open() {
      pg ??= (async () => {
        const cluster = await sharedPostgres();
        const db: DataSource = await openDatabase({ dataDir: os.tmpdir(), databaseUrl: await cluster.createDatabase() });
        closers.push(() => db.destroy());
        return new PostgresFtsIndex(db);
      })();
      return pg;
    },
  },
];

const permissionsOf = (acl: FileAcl, changedAt: Date | null = null): Permissions => ({ server: SERVER, acl, changedAt });

function doc(name: string, text: string, acl: FileAcl | null, sourceId = SOURCE): DocumentInput {
  return {
    sourceId,
    path: `share/${name}`,
    title: name,
    size: text.length,
    modifiedAt: new Date("2025-03-01T10:00:00Z"),
    version: null,
    permissions: acl ? permissionsOf(acl, new Date("2025-03-01T10:00:00Z")) : null,
    chunks: [{ chunkIndex: 0, text }],
  };
}

/** The SIDs each person has on SERVER: the port perm-smb's account links answer (here a table). */
const SIDS: Record<string, string[]> = {
  alice: [ALICE, HR, EVERYONE_SID, "S-1-5-11", "S-1-5-32-545"],
  bob: [BOB, EVERYONE_SID, "S-1-5-11", "S-1-5-32-545"],
  nobody: [EVERYONE_SID],
};
const actor = (userId: keyof typeof SIDS) => ({ userId, email: `${userId}@example.com` });

for (const engine of ENGINES) {
  describe(`file-server permissions on ${engine.name}`, { skip: engine.skip }, () => {
    const setUp = async () => {
      const index = await engine.open();
      const collection = crypto.randomUUID();
      await index.upsertDocuments(collection, [
        doc("salaries.txt", "harbour salaries for the year", ACLS.hrOnly),
        doc("review.txt", "harbour review of alice", ACLS.aliceDeniedHrAllowed),
        doc("canteen.txt", "harbour canteen menu", ACLS.everyone),
        doc("drafts.txt", "harbour drafts to write", ACLS.writeOnly),
        doc("board.txt", "harbour board minutes", ACLS.shareDeniesAlice),
        doc("plain.txt", "harbour plain notes from a plain source", null, PLAIN_SOURCE),
      ]);
      const permissions = new DocumentPermissions(index, async (userId, server) => {
        assert.equal(server, SERVER);
        return SIDS[userId];
      });
      const visible = (who: keyof typeof SIDS) =>
        permissions.readable(actor(who), collection, async (filter) => (await index.search(collection, "harbour", 10, filter)).map((hit) => hit.title).sort());
      return { index, collection, permissions, visible };
    };

    test("each person finds what the DACLs let them read, and a plain source's documents stay visible to all", async () => {
      const { visible } = await setUp();
      // Alice: HR allows salaries; her own deny comes first on review; write-only grants nothing; the share denies her the board minutes.
      assert.deepEqual(await visible("alice"), ["canteen.txt", "plain.txt", "salaries.txt"]);
      assert.deepEqual(await visible("bob"), ["canteen.txt", "plain.txt"]);
      assert.deepEqual(await visible("nobody"), ["canteen.txt", "plain.txt"]);
    });

    test("each distinct ACL is kept once, and the run's state reads each document's ACL id and change time", async () => {
      const { index, collection } = await setUp();
      await index.upsertDocuments(collection, [doc("salaries-2.txt", "more salaries", ACLS.hrOnly), doc("salaries-3.txt", "more salaries", ACLS.hrOnly)]);
      const { acls } = await index.acls(collection);
      assert.equal(acls.length, Object.keys(ACLS).length);
      const stored = acls.find((acl) => acl.id === aclIdOf(SERVER, ACLS.hrOnly));
      assert.deepEqual(stored?.acl, ACLS.hrOnly);
      const state = await index.indexedState(collection, SOURCE);
      assert.equal(state.get("share/salaries-2.txt")?.aclId, aclIdOf(SERVER, ACLS.hrOnly));
      assert.equal(state.get("share/salaries-2.txt")?.changedAt?.toISOString(), "2025-03-01T10:00:00.000Z");
      assert.equal((await index.indexedState(collection, PLAIN_SOURCE)).get("share/plain.txt")?.aclId, null);
    });

    test("the documents list and the counts hold only what the caller may read", async () => {
      const { index, collection, permissions } = await setUp();
      const list = await permissions.readable(actor("bob"), collection, (filter) => index.listDocuments(collection, 0, 10, filter));
      assert.equal(list.total, 2);
      assert.deepEqual(list.items.map((item) => item.title), ["canteen.txt", "plain.txt"]);
      const counts = await permissions.readable(actor("alice"), collection, (filter) => index.stats(collection, filter));
      assert.deepEqual([counts.documentCount, counts.chunkCount], [3, 3]);
      // Without a filter (management, the embedding stage) every document counts.
      assert.equal((await index.stats(collection)).documentCount, 6);
    });

    test("a page of top_k readable hits comes back when unreadable chunks rank above them", async () => {
      const index = await engine.open();
      const collection = crypto.randomUUID();
      const secret = Array.from({ length: 30 }, (_, i) => doc(`secret-${i}.txt`, `lighthouse lighthouse lighthouse keeper ${i}`, ACLS.hrOnly));
      const open = Array.from({ length: 5 }, (_, i) => doc(`open-${i}.txt`, `a lighthouse note ${i} and much other text about the coast and its weather`, ACLS.everyone));
      await index.upsertDocuments(collection, [...secret, ...open]);
      const permissions = new DocumentPermissions(index, async (userId) => SIDS[userId]);
      const hits = await permissions.readable(actor("bob"), collection, (filter) => index.search(collection, "lighthouse", 5, filter));
      assert.deepEqual(hits.map((hit) => hit.title).sort(), open.map((d) => d.title).sort());
      const all = await permissions.readable(actor("alice"), collection, (filter) => index.search(collection, "lighthouse", 5, filter));
      assert.ok(all.every((hit) => hit.title.startsWith("secret-")), "the best chunks rank first for a reader of both");
    });

    test("permissions changed in place change who finds the document, and its content stays", async () => {
      const { index, collection, visible } = await setUp();
      assert.ok(!(await visible("bob")).includes("salaries.txt"));
      await index.updatePermissions(collection, SOURCE, [{ path: "share/salaries.txt", permissions: permissionsOf({ file: [allow(BOB)], share: OPEN_SHARE }, new Date("2025-04-01T00:00:00Z")) }]);
      assert.deepEqual(await visible("bob"), ["canteen.txt", "plain.txt", "salaries.txt"]);
      assert.ok(!(await visible("alice")).includes("salaries.txt"), "HR's allow is gone");
      const state = (await index.indexedState(collection, SOURCE)).get("share/salaries.txt")!;
      assert.equal(state.changedAt?.toISOString(), "2025-04-01T00:00:00.000Z");
      const [hit] = await index.search(collection, "salaries", 1);
      assert.equal(hit.text, "harbour salaries for the year");
      // Permissions taken away (the source no longer uses them): every member sees it.
      await index.updatePermissions(collection, SOURCE, [{ path: "share/review.txt", permissions: null }]);
      assert.ok((await visible("nobody")).includes("review.txt"));
    });

    test("a document written in parts keeps its permissions", async () => {
      const { index, collection, visible } = await setUp();
      const header = { ...doc("big.txt", "", ACLS.hrOnly) } as Partial<DocumentInput>;
      delete header.chunks;
      const staged = await index.stageDocument(collection, header as Omit<DocumentInput, "chunks">);
      await staged.addChunks([{ chunkIndex: 0, text: "harbour big streamed file" }]);
      await staged.commit();
      assert.ok((await visible("alice")).includes("big.txt"));
      assert.ok(!(await visible("bob")).includes("big.txt"));
    });

    test("a batch with a new ACL committed while an unfiltered search ran: the search runs again with a filter", async () => {
      const index = await engine.open();
      const collection = crypto.randomUUID();
      await index.upsertDocuments(collection, [doc("canteen.txt", "harbour canteen menu", ACLS.everyone)]);
      const permissions = new DocumentPermissions(index, async (userId) => SIDS[userId]);
      const filters: Array<readonly string[] | undefined> = [];
      const found = await permissions.readable(actor("bob"), collection, async (filter) => {
        filters.push(filter.readableAcls);
        // Every ACL Bob's SIDs meet so far is readable, so no filter goes with the first try; a job commits meanwhile.
        if (filters.length === 1) await index.upsertDocuments(collection, [doc("salaries.txt", "harbour salaries", ACLS.hrOnly)]);
        return (await index.search(collection, "harbour", 10, filter)).map((hit) => hit.title);
      });
      assert.deepEqual(filters, [undefined, [aclIdOf(SERVER, ACLS.everyone)]]);
      assert.deepEqual(found, ["canteen.txt"]);
    });

    test("a version-checked search whose ACL version moves between its filter and its ranking is ranked again with a filter computed at the new version", async () => {
      const index = await engine.open();
      const collection = crypto.randomUUID();
      await index.upsertDocuments(collection, [doc("canteen.txt", "harbour canteen menu", ACLS.everyone)]);
      let versionReads = 0;
      const source = {
        acls: (id: string) => index.acls(id),
        aclVersion: (id: string) => {
          versionReads++;
          return index.aclVersion(id);
        },
        aclVersions: (ids: readonly string[]) => index.aclVersions(ids),
        checksAclVersion: index.checksAclVersion,
      };
      const permissions = new DocumentPermissions(source, async (userId) => SIDS[userId]);
      const search = (filter: ReadableFilter) => index.search(collection, "harbour", 10, filter);
      // An earlier request: the collection's ACLs are held from it.
      assert.deepEqual((await permissions.readable(actor("bob"), collection, search, { versionChecked: true })).map((hit) => hit.title), ["canteen.txt"]);
      const readsBefore = versionReads;
      const filters: Array<readonly string[] | undefined> = [];
      const found = await permissions.readable(
        actor("bob"),
        collection,
        async (filter) => {
          filters.push(filter.readableAcls);
          // Bob may read every ACL held, so the first try has no filter; a job commits a new ACL (HR's only) before the ranking.
          if (filters.length === 1) await index.upsertDocuments(collection, [doc("salaries.txt", "harbour salaries", ACLS.hrOnly)]);
          return (await search(filter)).map((hit) => hit.title);
        },
        { versionChecked: true },
      );
      assert.deepEqual(filters, [undefined, [aclIdOf(SERVER, ACLS.everyone)]]);
      assert.deepEqual(found, ["canteen.txt"], "never the file Bob may not read");
      // PostgreSQL reads the version in the ranking statement itself: no read of it before or after.
      if (index.checksAclVersion) assert.equal(versionReads, readsBefore, "no separate read of the ACL version");
    });

    test("the collection's ACLs are read again only when their version moves, and each person's SIDs are asked per request", async () => {
      const { index, collection } = await setUp();
      let aclReads = 0;
      const asked: string[] = [];
      const permissions = new DocumentPermissions(
        {
          acls: (id) => {
            aclReads++;
            return index.acls(id);
          },
          aclVersion: (id) => index.aclVersion(id),
          aclVersions: (ids) => index.aclVersions(ids),
        },
        async (userId) => {
          asked.push(userId);
          return SIDS[userId];
        },
      );
      const first = await permissions.filterOf(actor("alice"), collection);
      await permissions.filterOf(actor("bob"), collection);
      assert.deepEqual((await permissions.filterOf(actor("alice"), collection)).filter, first.filter);
      assert.equal(aclReads, 1);
      assert.deepEqual(asked, ["alice", "bob", "alice"]);
      await index.upsertDocuments(collection, [doc("new.txt", "harbour news", { file: [allow(BOB)], share: OPEN_SHARE })]);
      assert.notEqual((await permissions.filterOf(actor("alice"), collection)).version, first.version);
      assert.equal(aclReads, 2);
    });

    test("a listing's counts for many collections at once: each collection's readable count, plain and permission documents mixed, with and without a link", async () => {
      const { index, collection: mixed, permissions } = await setUp();
      const plainOnly = crypto.randomUUID();
      const permissionOnly = crypto.randomUUID();
      const empty = crypto.randomUUID();
      await index.upsertDocuments(plainOnly, [doc("a.txt", "plain a", null, PLAIN_SOURCE), doc("b.txt", "plain b", null, PLAIN_SOURCE)]);
      await index.upsertDocuments(permissionOnly, [doc("hr.txt", "hr", ACLS.hrOnly), doc("all.txt", "all", ACLS.everyone), doc("all2.txt", "all 2", ACLS.everyone)]);
      const ids = [mixed, plainOnly, permissionOnly, empty];
      let versionReads = 0;
      let statsCalls = 0;
      const aclVersions = (many: readonly string[]) => {
        versionReads += 1;
        return index.aclVersions(many);
      };
      const counting = new DocumentPermissions({ acls: (id) => index.acls(id), aclVersion: (id) => index.aclVersion(id), aclVersions }, async (userId) => SIDS[userId]);
      const statsOf = (filters: ReadableFilter[]) => {
        statsCalls += 1;
        return index.statsOfMany(ids.map((collectionId, i) => ({ collectionId, filter: filters[i] })));
      };
      const counts = async (who: keyof typeof SIDS) => (await counting.readableMany(actor(who), ids, statsOf)).map((s) => s.documentCount);
      // alice (linked: her SID and hr): salaries, canteen, plain in the mixed one; both plain; hr and the two open ones; nothing.
      assert.deepEqual(await counts("alice"), [3, 2, 3, 0]);
      // no link (Everyone only): canteen and plain; both plain; the two open ones.
      assert.deepEqual(await counts("nobody"), [2, 2, 2, 0]);
      // bob (linked, in no group here): canteen and plain; both plain; the two open ones.
      assert.deepEqual(await counts("bob"), [2, 2, 2, 0]);
      // Per listing: the versions read once before the counts and once after for the collections counted without a filter (a new ACL committed meanwhile would show), the counts once.
      assert.deepEqual([versionReads, statsCalls], [6, 3], "two reads of the versions and one of the counts per listing, however many collections");
      // The same as each collection counted alone.
      for (const who of ["alice", "nobody", "bob"] as const) {
        const alone = await Promise.all(ids.map((id) => permissions.readable(actor(who), id, (filter) => index.stats(id, filter))));
        assert.deepEqual(await counts(who), alone.map((s) => s.documentCount), who);
      }
      const chunks = await index.statsOfMany([{ collectionId: mixed, filter: {} }, { collectionId: permissionOnly, filter: { readableAcls: [] } }]);
      assert.deepEqual(chunks.map((s) => [s.documentCount, s.chunkCount]), [[6, 6], [0, 0]], "no filter counts all; an empty readable set only documents without an ACL");
    });

    test("a vector hit's documents are checked by the same filter", async () => {
      const { index, collection, permissions } = await setUp();
      const ids = (await index.listDocuments(collection, 0, 10)).items;
      const readable = await permissions.readable(actor("bob"), collection, (filter) => index.readableDocuments(collection, ids.map((d) => d.documentId), filter));
      assert.deepEqual(ids.filter((d) => readable.has(d.documentId)).map((d) => d.title).sort(), ["canteen.txt", "plain.txt"]);
    });
  });
}
