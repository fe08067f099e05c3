import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { JobCounters } from "../../server/ingest/job-counters";
import { JobThreads } from "../../server/ingest/job-thread";
import { ParserPool } from "../../server/ingest/parse/parser-pool";
import { ThreadedSqliteIndex } from "../../server/search/threaded-index";
import { loadConfig } from "../../server/config";
import { sqliteIndexOptions } from "../../server/storage";
import { FEEDER_NICENESS } from "../../server/threads/thread-priority";

/** Every thread of this process and its nice value (Linux: field 19 of /proc/self/task/TID/stat). */
function niceByThread(): Map<number, number> {
  const threads = new Map<number, number>();
  for (const tid of fs.readdirSync("/proc/self/task")) {
    try {
      const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
      // After the command name in parentheses: state is field 3, nice field 19.
      threads.set(Number(tid), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]));
    } catch {
      // The thread ended while we looked.
    }
  }
  return threads;
}

class Counters extends JobCounters {
  constructor() {
    super(0);
  }
  protected async persist(): Promise<void> {}
}

describe("threads that feed an ingestion run below the API's thread and the index writer", { skip: process.platform !== "linux" && "nice values per thread are Linux's" }, () => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "sluice-thread-priority-")));
  const share = path.join(dir, "share");
  fs.mkdirSync(share);
  fs.writeFileSync(path.join(share, "otters.txt"), "Otters hold hands while they sleep.");
  const index = new ThreadedSqliteIndex({ dir: path.join(dir, "indexes"), ...sqliteIndexOptions(loadConfig({})) });
  const threads = new JobThreads(index, null);
  // The index's and the job's threads do not hold the process (the server's sockets do): this test holds it.
  const hold = setInterval(() => undefined, 1000);
  after(async () => {
    await threads.close();
    await index.close();
    clearInterval(hold);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("a parser thread runs at the feeders' nice value, the thread that started it keeps its own", async () => {
    const before = niceByThread();
    const pool = new ParserPool({ size: 1 });
    try {
      const parsed = await pool.parse("a.txt", new TextEncoder().encode("a capybara"));
      assert.equal(parsed.kind, "indexed");
      const started = [...niceByThread()].filter(([tid]) => !before.has(tid));
      assert.ok(
        started.some(([, nice]) => nice === FEEDER_NICENESS),
        `a new thread at ${FEEDER_NICENESS}: ${JSON.stringify(started)}`,
      );
      assert.equal(niceByThread().get(process.pid), 0, "this (the API's) thread is untouched");
    } finally {
      await pool.close();
    }
  });

  it("the job thread and its parser run at the feeders' nice value; the index writer and the API's thread at 0", async () => {
    const collectionId = randomUUID();
    // The writer thread (and libuv's pool, by this write's file work) start from this thread first.
    await index.upsertDocuments(collectionId, [
      { sourceId: "other", path: "x.txt", title: "x", size: 1, modifiedAt: new Date(0), version: null, chunks: [{ chunkIndex: 0, text: "x" }] },
    ]);
    await fs.promises.readFile(path.join(share, "otters.txt"));
    const before = niceByThread();
    const progress = new Counters();
    await threads.run({ connector: { kind: "folder", folder: share, rules: { roots: [dir], dataDir: path.join(dir, "data"), dotfiles: "skip" } }, sourceId: "source-1", collectionId }, progress, new AbortController().signal);
    assert.equal(progress.filesAdded, 1);
    const after = niceByThread();
    const lowered = [...after].filter(([tid, nice]) => nice === FEEDER_NICENESS && !before.has(tid));
    assert.ok(lowered.length >= 2, `the job thread and its parser: ${JSON.stringify([...after])}`);
    for (const [tid, nice] of before) {
      if (nice === 0 && after.has(tid)) assert.equal(after.get(tid), 0, `thread ${tid}, running before the job (this one, the writer, libuv's pool), keeps nice 0`);
    }
    assert.equal(after.get(process.pid), 0);
    assert.equal((await index.search(collectionId, "otters", 5))[0]?.path, "otters.txt");
  });
});
