import crypto from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { DataSource } from "typeorm";
import { DocumentPermissions } from "../../server/access/document-permissions";
import { EVERYONE_SID } from "../../server/access/windows-acl";
import type { FileAcl } from "../../server/search/stored-acl";
import { openDatabase } from "../../server/data/data-source";
import { PostgresFtsIndex } from "../../server/search/postgres";
import type { DocumentInput, SearchIndex } from "../../server/search/search-index";
import { SqliteFtsIndex } from "../../server/search/sqlite";
import { startPostgres, type PostgresCluster } from "../fixtures/postgres";
import { prose, seeded, vocabulary, zipfWord } from "./corpus";
import { percentile } from "./measure";

/**
 * Issue 33 item 9: search with the file server's permissions against the same search without
 * them. 100,000 chunks over 10,000 documents with 200 distinct ACLs, the caller allowed by about
 * half of them; each query runs both ways, one after the other, straight against the index
 * (the per-request work of access/document-permissions.ts included on the permission side).
 * Run directly: `node --import tsx test/bench/permission.bench.ts [chunks] [queries] [--postgres]`.
 */

export interface PermissionBenchOptions {
  chunks: number;
  documents: number;
  acls: number;
  queries: number;
  engine?: "sqlite" | "postgres";
}

export interface PermissionBenchResult {
  engine: "sqlite" | "postgres";
  plainP95: number;
  permittedP95: number;
  /** permittedP95 / plainP95. */
  ratio: number;
  /** Share of the documents the caller may read. */
  readableShare: number;
}

/** Issue 33's target: search with permissions at most this many times the same search without. */
export const PERMISSION_SEARCH_TARGET = 1.5;

const CALLER = { userId: "bench-caller", email: "caller@example.com" };
const READ = 0x120089;
const groupSid = (k: number) => `S-1-5-21-1000-2000-3000-${5000 + k}`;
const CALLER_SIDS = (acls: number) => [EVERYONE_SID, "S-1-5-11", "S-1-5-32-545", ...Array.from({ length: acls }, (_, k) => k).filter((k) => k % 2 === 0).map(groupSid)];

/** ACL k allows its own group (the caller is in the even ones); every fifth denies that group first to someone else's group too, as real DACLs mix. */
function aclOf(k: number): FileAcl {
  const file = [
    ...(k % 5 === 0 ? [{ kind: "deny" as const, inherited: false, mask: READ, sid: groupSid(k + 1) }] : []),
    { kind: "allow" as const, inherited: false, mask: READ, sid: groupSid(k) },
    { kind: "allow" as const, inherited: true, mask: 0x1f01ff, sid: "S-1-5-32-544" },
  ];
  return { file, share: [{ kind: "allow", inherited: false, mask: 0x1f01ff, sid: EVERYONE_SID }] };
}

export async function runPermissionBench(options: PermissionBenchOptions): Promise<PermissionBenchResult> {
  const engine = options.engine ?? "sqlite";
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "sluice-permission-bench-"));
  let cluster: PostgresCluster | null = null;
  let db: DataSource | null = null;
  let index: SearchIndex & { optimize?(collectionId: string): Promise<void> };
  if (engine === "postgres") {
    cluster = await startPostgres();
    db = await openDatabase({ dataDir: root, databaseUrl: await cluster.createDatabase() });
    index = new PostgresFtsIndex(db);
  } else {
    index = new SqliteFtsIndex({ dir: path.join(root, "indexes") });
  }
  const collection = crypto.randomUUID();
  const sourceId = crypto.randomUUID();
  const random = seeded(33);
  const words = vocabulary(20_000, random);
  const perDocument = Math.max(1, Math.round(options.chunks / options.documents));
  try {
    let batch: DocumentInput[] = [];
    for (let d = 0; d < options.documents; d++) {
      const at = new Date(1_700_000_000_000 + d * 1000);
      batch.push({
        sourceId,
        path: `dept-${d % 50}/${zipfWord(words, random)}-${d}.txt`,
        title: `${zipfWord(words, random)} ${d}`,
        size: perDocument * 1000,
        modifiedAt: at,
        version: null,
        permissions: { server: "fs.bench", acl: aclOf(d % options.acls), changedAt: at },
        chunks: Array.from({ length: perDocument }, (_, i) => ({ chunkIndex: i, text: prose(words, random, 1000) })),
      });
      if (batch.length === 100) {
        await index.upsertDocuments(collection, batch);
        batch = [];
      }
    }
    if (batch.length) await index.upsertDocuments(collection, batch);
    if (db) await db.query("VACUUM ANALYZE search_chunks");
    else await index.optimize!(collection);

    const sids = CALLER_SIDS(options.acls);
    const permissions = new DocumentPermissions(index, async () => sids);
    const all = await index.stats(collection);
    const readable = await permissions.readable(CALLER, collection, (filter) => index.stats(collection, filter));
    const queryRandom = seeded(7);
    const queries = Array.from({ length: options.queries }, () => Array.from({ length: 1 + Math.floor(queryRandom() * 3) }, () => zipfWord(words, queryRandom)).join(" "));
    // As the server's keyword search asks it (collections.service.ts): version-checked, so on
    // PostgreSQL the ranking statement itself reads the ACL version (decision 0503).
    const permitted = (q: string) => permissions.readable(CALLER, collection, (filter) => index.search(collection, q, 10, filter), { versionChecked: true });
    for (const q of queries.slice(0, 20)) {
      await index.search(collection, q, 10);
      await permitted(q);
    }
    const plainMs: number[] = [];
    const permittedMs: number[] = [];
    for (const q of queries) {
      let t = performance.now();
      await index.search(collection, q, 10);
      plainMs.push(performance.now() - t);
      t = performance.now();
      await permitted(q);
      permittedMs.push(performance.now() - t);
    }
    plainMs.sort((a, b) => a - b);
    permittedMs.sort((a, b) => a - b);
    const plainP95 = percentile(plainMs, 95);
    const permittedP95 = percentile(permittedMs, 95);
    return { engine, plainP95, permittedP95, ratio: permittedP95 / plainP95, readableShare: readable.documentCount / all.documentCount };
  } finally {
    await index.close();
    if (db?.isInitialized) await db.destroy();
    await cluster?.stop();
    fs.rmSync(root, { recursive: true, force: true });
  }
}

if (require.main === module) {
  const chunks = Number(process.argv[2] ?? 100_000);
  const queries = Number(process.argv[3] ?? 500);
  const engine = process.argv.includes("--postgres") ? "postgres" : "sqlite";
  runPermissionBench({ chunks, documents: Math.max(1, Math.round(chunks / 10)), acls: 200, queries, engine })
    .then((r) => process.stdout.write(`${JSON.stringify(r, null, 2)}\n`))
    .catch((error: unknown) => {
      process.stderr.write(`${(error as Error).stack}\n`);
      process.exit(1);
    });
}
