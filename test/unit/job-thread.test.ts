import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { MessageChannel } from "node:worker_threads";
import type { DataSource } from "typeorm";
import { isDiskFull } from "../../server/disk/disk-space";
import { JobCounters, type ProgressRow } from "../../server/ingest/job-counters";
import { JOB_ERROR_KINDS, JobInterrupted } from "../../server/ingest/job-interrupted";
import { JobThreads, type ThreadTask } from "../../server/ingest/job-thread";
import { fromWire, toWire } from "../../server/threads/wire-error";
import { IndexDamagedError } from "../../server/search/index-damage";
import { ThreadedSqliteIndex } from "../../server/search/threaded-index";
import { threadablePostgres, threadableSqlite } from "../../server/ingest/threadable-indexes";
import { threadableIndex } from "../../server/ingestion";
import { GROUP_COMMIT, PARALLEL_BATCHES } from "../../server/ingest/batched-index-writer";
import { OutageRetryingIndex } from "../../server/ingest/outage-retrying-index";
import { serveIndexPort } from "../../server/ingest/index-port-server";
import { DatabaseConnectionLost, DatabaseOutage } from "../../server/data/database-outage";
import { openDatabase } from "../../server/data/data-source";
import { PostgresFtsIndex } from "../../server/search/postgres-fts-index";
import type { DocumentInput } from "../../server/search/search-index";
import type { CallReply } from "../../server/threads/pending-calls";
import { postgresBinDir, sharedPostgres } from "../fixtures/postgres";

/** The counters a job's thread posted, as the API's thread took them on. */
class Adopted extends JobCounters {
  readonly rows: ProgressRow[] = [];
  constructor(everyMs = 0) {
    super(everyMs);
  }
  protected async persist(row: ProgressRow): Promise<void> {
    this.rows.push(row);
  }
}

describe("an ingestion job on its own thread (real folder, real SQLite index and writer thread)", () => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "sluice-job-thread-")));
  const share = path.join(dir, "share");
  fs.mkdirSync(path.join(share, "sub"), { recursive: true });
  fs.writeFileSync(path.join(share, "otters.txt"), "Otters hold hands while they sleep.");
  fs.writeFileSync(path.join(share, "sub", "herons.md"), "# Herons\n\nHerons stand still in the shallows.");
  fs.writeFileSync(path.join(share, "empty.txt"), "");
  const index = new ThreadedSqliteIndex({ dir: path.join(dir, "indexes") });
  const threads = new JobThreads(threadableSqlite(index), null);
  const task = (collectionId: string, folder = share): ThreadTask => ({ connector: { kind: "folder", folder, roots: [dir] }, sourceId: "source-1", collectionId });
  after(async () => {
    // Idle threads do not hold the process (the server's sockets do): this test holds it while they close.
    const hold = setInterval(() => undefined, 1000);
    await threads.close();
    await index.close();
    clearInterval(hold);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("indexes the folder, its counters reach this thread, and a second run on the same thread finds it unchanged", async () => {
    const collectionId = randomUUID();
    const first = new Adopted();
    await threads.run(task(collectionId), first, new AbortController().signal, index);
    assert.equal(first.filesAdded, 2);
    assert.equal(first.entitiesSkipped, 1);
    assert.equal(first.discoveryComplete, true);
    assert.deepEqual(first.skips, [{ entity: "empty.txt", reason: "empty" }]);
    assert.equal((await index.search(collectionId, "herons", 5))[0]?.path, "sub/herons.md");

    const second = new Adopted();
    await threads.run(task(collectionId), second, new AbortController().signal, index);
    assert.equal(second.filesUnchanged, 2);
    assert.equal(second.filesAdded, 0);
  });

  it("what the job's thread flushes (the end of discovery) is written at once here, not at the next periodic write", async () => {
    const progress = new Adopted(60_000);
    await threads.run(task(randomUUID()), progress, new AbortController().signal, index);
    assert.ok(
      progress.rows.some((row) => row.discoveryComplete && row.entitiesDiscovered === 3 && row.entitiesProcessed === 0),
      JSON.stringify(progress.rows.map((r) => [r.discoveryComplete, r.entitiesDiscovered, r.entitiesProcessed])),
    );
  });

  it("the job thread's old generation is capped at 1 GB, so V8 collects its garbage sooner than a default heap would", async () => {
    const trace = path.join(dir, "heap-trace.jsonl");
    // The thread takes the environment as it is when it starts: a JobThreads of its own, started now.
    process.env.SLUICE_HEAP_TRACE = trace;
    const own = new JobThreads(threadableSqlite(index), null);
    try {
      await own.run(task(randomUUID()), new Adopted(), new AbortController().signal, index);
    } finally {
      delete process.env.SLUICE_HEAP_TRACE;
      await own.close();
    }
    const line = fs
      .readFileSync(trace, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { thread: string; heapLimit: number })
      .find((l) => l.thread === "job thread");
    assert.ok(line, "the job thread wrote no trace line");
    // The limit is the old generation's ceiling plus the young generation's (a few MB).
    assert.ok(line.heapLimit > 1024 * 1024 * 1024 && line.heapLimit < 1100 * 1024 * 1024, `heap limit ${line.heapLimit}`);
  });

  it("a cancel (the signal) ends the job as interrupted", async () => {
    const stop = new AbortController();
    stop.abort();
    await assert.rejects(threads.run(task(randomUUID()), new Adopted(), stop.signal, index), (error: unknown) => error instanceof JobInterrupted);
  });

  it("a failure inside the thread arrives with its words", async () => {
    await assert.rejects(threads.run(task(randomUUID(), path.join(dir, "missing")), new Adopted(), new AbortController().signal, index), /^Error: Source unreachable: /);
  });

  it("a full disk found on the job's thread is still a full disk here", async () => {
    const tight = new JobThreads(threadableSqlite(index), { dir, minFreeBytes: Number.MAX_SAFE_INTEGER });
    try {
      await assert.rejects(tight.run(task(randomUUID()), new Adopted(), new AbortController().signal, index), (error: unknown) => isDiskFull(error));
    } finally {
      await tight.close();
    }
  });

  it("a damaged index file, found through this thread's reader, is set aside and rebuilt by the job", async () => {
    const collectionId = randomUUID();
    fs.mkdirSync(path.join(dir, "indexes"), { recursive: true });
    fs.writeFileSync(path.join(dir, "indexes", `${collectionId}.db`), "this is not a database ".repeat(500));
    const progress = new Adopted();
    await threads.run(task(collectionId), progress, new AbortController().signal, index);
    assert.equal(progress.filesAdded, 2);
    assert.match(progress.errors[0]?.message ?? "", /index was damaged; it was moved aside/);
    assert.equal((await index.search(collectionId, "otters", 5)).length, 1);
  });

  it("calls afterWork (malloc_trim by default) once the last job has ended, and again once the idle thread has ended", async () => {
    let calls = 0;
    const own = new JobThreads(threadableSqlite(index), null, { idleMs: 300, afterWork: () => calls++ });
    // Idle threads do not hold the process: this test holds it until the thread has ended.
    const hold = setInterval(() => undefined, 1000);
    try {
      const collectionId = randomUUID();
      await Promise.all([own.run(task(collectionId), new Adopted(), new AbortController().signal, index), own.run(task(randomUUID()), new Adopted(), new AbortController().signal, index)]);
      assert.equal(calls, 1, "once, when the second of the two jobs ended");
      await own.run(task(collectionId), new Adopted(), new AbortController().signal, index);
      assert.equal(calls, 2, "after the next job on the same, still warm thread");
      const deadline = Date.now() + 10_000;
      while (calls < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      assert.equal(calls, 3, "after the idle thread ended");
    } finally {
      clearInterval(hold);
      await own.close();
    }
  });

  it("jobs fail, not hang, when the thread is closed under them", async () => {
    const big = path.join(dir, "big");
    fs.mkdirSync(big);
    for (let i = 0; i < 300; i++) fs.writeFileSync(path.join(big, `n-${i}.txt`), `note ${i} `.repeat(200));
    const own = new JobThreads(threadableSqlite(index), null);
    const failed = assert.rejects(own.run(task(randomUUID(), big), new Adopted(), new AbortController().signal, index), /The ingestion job thread stopped/);
    await own.close();
    await failed;
  });
});

describe("errors crossing between threads", () => {
  it("keep their class where callers test it, and their code", () => {
    assert.ok(fromWire(toWire(new IndexDamagedError()), JOB_ERROR_KINDS) instanceof IndexDamagedError);
    assert.ok(fromWire(toWire(new JobInterrupted()), JOB_ERROR_KINDS) instanceof JobInterrupted);
    // Without the kinds, a plain Error that keeps its name and code.
    const plain = fromWire(toWire(new IndexDamagedError()));
    assert.ok(!(plain instanceof IndexDamagedError));
    assert.equal((plain as { code?: string }).code, "SLUICE_INDEX_DAMAGED");
    const full = fromWire(toWire(Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" })), JOB_ERROR_KINDS);
    assert.equal((full as { code?: string }).code, "SQLITE_FULL");
    assert.equal(full.message, "database or disk is full");
    assert.equal(fromWire(toWire("a thrown string")).message, "a thrown string");
  });
});

/** The PostgreSQL index with its batches, settles and the thread they were made on recorded, and failures to throw on demand. */
class SpiedPostgres extends PostgresFtsIndex {
  readonly batches: number[] = [];
  settled = 0;
  /** Thrown by the next upsertDocuments calls, one each. */
  readonly failures: Array<() => Error> = [];

  async upsertDocuments(collectionId: string, docs: DocumentInput[]): Promise<string[]> {
    const failure = this.failures.shift();
    if (failure) throw failure();
    this.batches.push(docs.length);
    return super.upsertDocuments(collectionId, docs);
  }

  async settleWrites(): Promise<void> {
    this.settled += 1;
    await super.settleWrites();
  }
}

describe("an ingestion job on its own thread with the PostgreSQL index (real folder, throwaway cluster)", { skip: postgresBinDir() ? false : "PostgreSQL is not installed" }, () => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "sluice-job-thread-pg-")));
  const share = path.join(dir, "share");
  fs.mkdirSync(share);
  for (let i = 0; i < 150; i++) fs.writeFileSync(path.join(share, `note-${i}.txt`), `Note ${i}: the lighthouse keeper logs gull${i} at dawn.`);
  // Over STREAM_TEXT_ABOVE_BYTES: a staged document, its parts sent over the job's writer channel.
  fs.writeFileSync(path.join(share, "big.txt"), `${"A tide table line with nothing rare in it.\n".repeat(120_000)}The cormorant comes last.\n`);
  let db: DataSource;
  let pg: SpiedPostgres;
  const threads = new JobThreads(threadablePostgres(), null);
  const task = (collectionId: string): ThreadTask => ({ connector: { kind: "folder", folder: share, roots: [dir] }, sourceId: "source-1", collectionId });
  /** The index as the job handler hands it over (ingest-job.ts), with a short grace. */
  const jobIndex = (signal: AbortSignal, graceMs = 5_000) => new OutageRetryingIndex(pg, new DatabaseOutage(graceMs), signal);
  const pending = async () =>
    ((await db.query("SELECT gin_clean_pending_list('search_chunks_tsv')::int AS tsv, gin_clean_pending_list('search_chunks_tsv_exact')::int AS exact")) as { tsv: number; exact: number }[])[0];

  before(async () => {
    const cluster = await sharedPostgres();
    db = await openDatabase({ dataDir: dir, databaseUrl: await cluster.createDatabase() });
    pg = new SpiedPostgres(db);
  });
  after(async () => {
    const hold = setInterval(() => undefined, 1000);
    await threads.close();
    await pg?.close();
    await db?.destroy();
    clearInterval(hold);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("ingestion.ts gives PostgreSQL the job thread, with its own batch policy and a settle at the job's end", async () => {
    const threadable = threadableIndex(pg);
    assert.ok(threadable, "PostgreSQL jobs run on the job thread");
    assert.deepEqual(threadable.jobWrites, { batching: PARALLEL_BATCHES, settleWrites: true });
    const sqlite = new ThreadedSqliteIndex({ dir: path.join(dir, "indexes") });
    try {
      assert.deepEqual(threadableIndex(sqlite)?.jobWrites, { batching: GROUP_COMMIT, settleWrites: false });
    } finally {
      await sqlite.close();
    }
  });

  it("indexes the folder from the job thread: documents land, batches of up to 64, the pending lists folded at the end", async () => {
    const collectionId = randomUUID();
    const signal = new AbortController().signal;
    const progress = new Adopted();
    pg.batches.length = 0;
    const settledBefore = pg.settled;
    await threads.run(task(collectionId), progress, signal, jobIndex(signal));
    assert.equal(progress.filesAdded, 151);
    assert.equal(progress.entitiesFailed, 0);
    assert.deepEqual((await pg.search(collectionId, "gull42", 5)).map((h) => h.path), ["note-42.txt"]);
    assert.deepEqual((await pg.search(collectionId, "cormorant", 5)).map((h) => h.path), ["big.txt"]);
    assert.equal((await pg.stats(collectionId)).documentCount, 151);
    // PARALLEL_BATCHES: the first batch waits for 64 documents (GROUP_COMMIT's went at 16), none holds more.
    assert.equal(
      pg.batches.reduce((a, b) => a + b, 0),
      150,
    );
    assert.ok(pg.batches[0] > GROUP_COMMIT.documents && pg.batches.every((n) => n <= PARALLEL_BATCHES.maxDocuments), `batches ${pg.batches.join(", ")}`);
    assert.equal(pg.settled, settledBefore + 1, "settleWrites ran once, at the job's end");
    assert.deepEqual(await pending(), { tsv: 0, exact: 0 }, "nothing left pending after the job");

    const again = new Adopted();
    await threads.run(task(collectionId), again, signal, jobIndex(signal));
    assert.equal(again.filesUnchanged, 151);
  });

  it("a short outage is ridden out on the API's thread; one past the grace ends the job with DatabaseConnectionLost", async () => {
    const refused = () => Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });
    const signal = new AbortController().signal;
    pg.failures.push(refused, refused);
    const progress = new Adopted();
    const collectionId = randomUUID();
    await threads.run(task(collectionId), progress, signal, jobIndex(signal));
    assert.equal(progress.filesAdded, 151);
    assert.equal(progress.entitiesFailed, 0);

    pg.failures.push(...Array.from({ length: 1_000 }, () => refused));
    try {
      await assert.rejects(threads.run(task(randomUUID()), new Adopted(), signal, jobIndex(signal, 300)), (error: unknown) => error instanceof DatabaseConnectionLost);
    } finally {
      pg.failures.length = 0;
    }
  });

  it("a staged document still open when its channel closes (the job thread gone) is rolled back, its connection freed", async () => {
    const { port1, port2 } = new MessageChannel();
    const signal = new AbortController().signal;
    serveIndexPort(port2, jobIndex(signal));
    const collectionId = randomUUID();
    const header = { sourceId: "source-1", path: "left.txt", title: "left", size: 10, modifiedAt: new Date(), version: null };
    const reply = await new Promise<CallReply>((resolve) => {
      port1.once("message", resolve);
      port1.postMessage({ id: 1, method: "stageChunks", args: [collectionId, "key-1", header, [{ chunkIndex: 0, text: "an abandoned albatross" }]] });
    });
    assert.equal(reply.ok, true);
    const inTransaction = async () =>
      Number(((await db.query("SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'")) as { n: string }[])[0].n);
    assert.equal(await inTransaction(), 1);
    port1.close();
    const deadline = Date.now() + 5_000;
    while ((await inTransaction()) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.equal(await inTransaction(), 0);
    assert.equal((await pg.search(collectionId, "albatross", 5)).length, 0);
  });
});
