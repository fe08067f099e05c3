import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { isDiskFull } from "../../server/disk/disk-space";
import { JobCounters, type ProgressRow } from "../../server/ingest/job-counters";
import { JOB_ERROR_KINDS, JobInterrupted } from "../../server/ingest/job-interrupted";
import { AFTER_WORK_DELAY_MS, JobThreads, type ThreadableIndex, type ThreadTask } from "../../server/ingest/job-thread";
import { fromWire, toWire } from "../../server/threads/wire-error";
import { IndexDamagedError } from "../../server/search/index-damage";
import { ThreadedSqliteIndex } from "../../server/search/threaded-index";
import { WriterPortIndex } from "../../server/ingest/writer-port-index";
import { loadConfig } from "../../server/config";
import { sqliteIndexOptions } from "../../server/storage";
import { countReaderChecks } from "../fixtures/reader-checks";
import { waitFor } from "../fixtures/wait-for";

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
  const index = new ThreadedSqliteIndex({ dir: path.join(dir, "indexes"), ...sqliteIndexOptions(loadConfig({})) });
  const threads = new JobThreads(index, null);
  const task = (collectionId: string, folder = share): ThreadTask => ({ connector: { kind: "folder", folder, rules: { roots: [dir], dataDir: path.join(dir, "data"), dotfiles: "skip" } }, sourceId: "source-1", collectionId });
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
    await threads.run(task(collectionId), first, new AbortController().signal);
    assert.equal(first.filesAdded, 2);
    assert.equal(first.entitiesSkipped, 1);
    assert.equal(first.discoveryComplete, true);
    assert.deepEqual(first.skips, [{ entity: "empty.txt", reason: "empty" }]);
    assert.equal((await index.search(collectionId, "herons", 5))[0]?.path, "sub/herons.md");

    const second = new Adopted();
    await threads.run(task(collectionId), second, new AbortController().signal);
    assert.equal(second.filesUnchanged, 2);
    assert.equal(second.filesAdded, 0);
    // The empty file is remembered through the writer thread's channel (markEmpty), so nothing is read again.
    assert.deepEqual(second.skips, [{ entity: "empty.txt", reason: "empty" }]);
    assert.equal(second.bytesProcessed, 0);
  });

  it("what the job's thread flushes (the end of discovery) is written at once here, not at the next periodic write", async () => {
    const progress = new Adopted(60_000);
    await threads.run(task(randomUUID()), progress, new AbortController().signal);
    assert.ok(
      progress.rows.some((row) => row.discoveryComplete && row.entitiesDiscovered === 3 && row.entitiesProcessed === 0),
      JSON.stringify(progress.rows.map((r) => [r.discoveryComplete, r.entitiesDiscovered, r.entitiesProcessed])),
    );
  });

  it("the job thread's old generation is capped at 1 GB, so V8 collects its garbage sooner than a default heap would", async () => {
    const trace = path.join(dir, "heap-trace.jsonl");
    // The thread takes the environment as it is when it starts: a JobThreads of its own, started now.
    process.env.SLUICE_HEAP_TRACE = trace;
    const own = new JobThreads(index, null);
    try {
      await own.run(task(randomUUID()), new Adopted(), new AbortController().signal);
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
    await assert.rejects(threads.run(task(randomUUID()), new Adopted(), stop.signal), (error: unknown) => error instanceof JobInterrupted);
  });

  it("a failure inside the thread arrives with its words", async () => {
    await assert.rejects(threads.run(task(randomUUID(), path.join(dir, "missing")), new Adopted(), new AbortController().signal), /^Error: Source unreachable: /);
  });

  it("a full disk found on the job's thread is still a full disk here", async () => {
    const tight = new JobThreads(index, { dir, minFreeBytes: Number.MAX_SAFE_INTEGER });
    try {
      await assert.rejects(tight.run(task(randomUUID()), new Adopted(), new AbortController().signal), (error: unknown) => isDiskFull(error));
    } finally {
      await tight.close();
    }
  });

  it("reads its indexed state over its own channel to the writer thread: the API's thread lends it only that channel", async () => {
    const collectionId = randomUUID();
    let setAside = 0;
    // What ThreadableIndex asks for and no more: this thread has no indexedState for the job to ask.
    const lent: ThreadableIndex = {
      writerPort: (id) => index.writerPort(id),
      noteDamaged: (id) => index.noteDamaged(id),
      noteWritten: (id) => index.noteWritten(id),
      moveAside: (id) => {
        setAside++;
        return index.moveAside(id);
      },
    };
    const own = new JobThreads(lent, null);
    try {
      await own.run(task(collectionId), new Adopted(), new AbortController().signal);
      const second = new Adopted();
      await own.run(task(collectionId), second, new AbortController().signal);
      assert.equal(second.filesUnchanged, 2, "the second run found what the first wrote");
      assert.equal(second.filesAdded, 0);
      assert.equal(setAside, 0);
    } finally {
      await own.close();
    }
  });

  it("reads the collection's stored ACLs over that channel too (a run trusting change times compares share DACLs with them)", async () => {
    const collectionId = randomUUID();
    const acl = { file: null, share: [{ kind: "allow" as const, inherited: false, mask: 0x120089, sid: "S-1-1-0" }] };
    const port = new WriterPortIndex(index.writerPort(collectionId), (id) => index.moveAside(id));
    try {
      await port.upsertDocuments(collectionId, [
        { sourceId: "s", path: "docs/a.txt", title: "a", size: 1, modifiedAt: new Date(0), version: null, permissions: { server: "fs.example", acl, changedAt: new Date(1) }, chunks: [{ chunkIndex: 0, text: "otters" }] },
      ]);
      const { acls } = await port.acls(collectionId);
      assert.deepEqual(acls.map((a) => [a.server, a.acl.share]), [["fs.example", acl.share]]);
    } finally {
      port.close();
    }
  });

  it("a damaged index file, found by the writer thread as the job reads its state, is set aside through this thread and rebuilt by the job", async () => {
    const collectionId = randomUUID();
    fs.mkdirSync(path.join(dir, "indexes"), { recursive: true });
    fs.writeFileSync(path.join(dir, "indexes", `${collectionId}.db`), "this is not a database ".repeat(500));
    const progress = new Adopted();
    await threads.run(task(collectionId), progress, new AbortController().signal);
    assert.equal(progress.filesAdded, 2);
    assert.match(progress.errors[0]?.message ?? "", /index was damaged; it was moved aside/);
    assert.equal((await index.search(collectionId, "otters", 5)).length, 1);
  });

  it("calls afterWork (malloc_trim by default) a moment after the last job has ended, not as it ends, and again once the idle thread has ended", async () => {
    let calls = 0;
    const own = new JobThreads(index, null, { idleMs: AFTER_WORK_DELAY_MS + 1500, afterWork: () => calls++ });
    // Idle threads do not hold the process: this test holds it until the thread has ended.
    const hold = setInterval(() => undefined, 1000);
    const until = (n: number) => waitFor(() => calls >= n, () => `afterWork call ${n} (${calls} so far)`);
    try {
      const collectionId = randomUUID();
      await Promise.all([own.run(task(collectionId), new Adopted(), new AbortController().signal), own.run(task(randomUUID()), new Adopted(), new AbortController().signal)]);
      assert.equal(calls, 0, "not while the job's end is being recorded");
      await until(1);
      assert.equal(calls, 1, "once, after the second of the two jobs ended");
      await own.run(task(collectionId), new Adopted(), new AbortController().signal);
      // A job that starts within the delay puts it off: one call after the last of the two.
      await own.run(task(collectionId), new Adopted(), new AbortController().signal);
      await until(2);
      // Time for a wrong third call to show: a slower machine only weakens this.
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(calls, 2, "after the next jobs on the same, still warm thread, once");
      await until(3);
      assert.equal(calls, 3, "after the idle thread ended");
    } finally {
      clearInterval(hold);
      await own.close();
    }
  });

  it("stops its parser threads once idle for parsersIdleMs, calls afterWork then, and keeps the job thread itself for the next job", { skip: process.platform !== "linux" ? "counts threads in /proc/self/status" : false }, async () => {
    const osThreads = () => Number(/^Threads:\s+(\d+)/m.exec(fs.readFileSync("/proc/self/status", "utf8"))![1]);
    let calls = 0;
    // Long enough that the parsers are surely still there as the job's end is answered: a one-file job's end takes milliseconds, and far less than this on a busy machine too.
    const own = new JobThreads(index, null, { idleMs: 10 * 60_000, parsersIdleMs: 3000, afterWork: () => calls++ });
    const hold = setInterval(() => undefined, 1000);
    const folder = path.join(dir, "warm");
    fs.mkdirSync(folder);
    fs.writeFileSync(path.join(folder, "kingfishers.txt"), "Kingfishers dive for fish.");
    try {
      const collectionId = randomUUID();
      await own.run(task(collectionId, folder), new Adopted(), new AbortController().signal);
      const thread = own.threadId;
      assert.notEqual(thread, null);
      const withParsers = osThreads();
      await waitFor(() => calls >= 2, () => `afterWork soon after the job, then after the parsers stopped (${calls} calls)`);
      assert.ok(osThreads() < withParsers, `the parser threads ended (${withParsers} OS threads, now ${osThreads()})`);
      assert.equal(own.threadId, thread, "the job thread stays");
      fs.writeFileSync(path.join(folder, "egrets.md"), "# Egrets\n\nEgrets wade in the marsh.");
      const next = new Adopted();
      await own.run(task(collectionId, folder), next, new AbortController().signal);
      assert.equal(next.filesAdded, 1, "the new file parsed: a parser thread started again");
      assert.equal(own.threadId, thread, "on the same, warm thread");
      assert.equal((await index.search(collectionId, "egrets", 5))[0]?.path, "egrets.md");
    } finally {
      clearInterval(hold);
      await own.close();
    }
  });

  it("a job's end tells the index the file is its writer's: the first search after it sends no check to a reader thread (decision 0541)", async () => {
    const checks = countReaderChecks();
    try {
      const collectionId = randomUUID();
      await threads.run(task(collectionId), new Adopted(), new AbortController().signal);
      assert.equal((await index.search(collectionId, "otters", 5))[0]?.path, "otters.txt");
      assert.equal(checks.count(), 0);
    } finally {
      checks.restore();
    }
  });

  it("jobs fail, not hang, when the thread is closed under them", async () => {
    const big = path.join(dir, "big");
    fs.mkdirSync(big);
    for (let i = 0; i < 300; i++) fs.writeFileSync(path.join(big, `n-${i}.txt`), `note ${i} `.repeat(200));
    const own = new JobThreads(index, null);
    const failed = assert.rejects(own.run(task(randomUUID(), big), new Adopted(), new AbortController().signal), /The ingestion job thread stopped/);
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
