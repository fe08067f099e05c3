import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import type { DataSource } from "typeorm";
import { openDatabase } from "../../server/data/data-source";
import { IngestJob } from "../../server/data/entities/ingest-job.entity";
import { DatabaseOutage } from "../../server/data/database-outage";
import { JobProgress } from "../../server/ingest/job-progress";
import { finishJob, INTERRUPTED, runJob } from "../../server/ingest/job-queue";
import { createLogger } from "../../server/logger";
import { waitFor } from "../fixtures/wait-for";

describe("JobProgress on a real SQLite job row", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sluice-job-progress-"));
  let db: DataSource;
  before(async () => {
    db = await openDatabase(dir);
    // A job row on its own: the pipeline it names is beside the point here.
    await db.query("PRAGMA foreign_keys = OFF");
  });
  after(async () => {
    if (db?.isInitialized) await db.destroy();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function newJob(): Promise<string> {
    const id = randomUUID();
    const now = new Date().toISOString();
    await db.query(
      `INSERT INTO ingest_jobs (id, pipeline_id, status, run_state, queue_seq, created_at, started_at) VALUES (?, ?, 'processing', 'running', 1, ?, ?)`,
      [id, randomUUID(), now, now],
    );
    return id;
  }
  const row = (id: string) => db.manager.findOneByOrFail(IngestJob, { id });

  it("writes a change that came too soon after the last write once it is due, not only at the next change", async () => {
    const id = await newJob();
    const progress = new JobProgress(db, id, new DatabaseOutage(0));
    progress.at("Indexing first.pdf");
    await progress.flush(); // as the first touch did: the row shows first.pdf
    progress.at("Indexing big.pdf"); // within 500 ms of that write: held back
    assert.equal((await row(id)).currentEntity, "Indexing first.pdf");
    // Due 500 ms after that write, with no further change to bring it: polled for, however slow the machine.
    await waitFor(async () => (await row(id)).currentEntity === "Indexing big.pdf", "the row to show the file being worked on during a quiet spell");
  });

  it("writes where the time went with the counters", async () => {
    const id = await newJob();
    const progress = new JobProgress(db, id, new DatabaseOutage(0));
    const end = progress.stats.begin("read");
    await new Promise((r) => setTimeout(r, 20));
    end();
    progress.stats.file("docs/a.pdf", { bytes: 123, parseSeconds: 0.5 });
    await progress.flush();
    const stats = (await row(id)).stats;
    assert.ok(stats && stats.timings.read_s >= 0.015, JSON.stringify(stats));
    assert.deepEqual(stats.by_type, { pdf: { files: 1, bytes: 123, failed: 0, parse_s: 0.5 } });
  });

  it("a job recorded as ended before its process marks it running is not run, and keeps its record", async () => {
    // A team-server worker frozen between its claim and runJob's write wakes after a sweep
    // recorded the job interrupted: the write must not make it "running" again (the sweep would
    // then record it a second time, with a new completed_at).
    const id = await newJob();
    await finishJob(db, id, randomUUID(), "failed", INTERRUPTED);
    const recorded = await row(id);
    let ran = false;
    const stale = Object.assign(new IngestJob(), { ...recorded, runState: "queued" as const });
    const handler = async () => {
      ran = true;
    };
    await runJob(db, handler, createLogger("error"), stale, new AbortController().signal, new DatabaseOutage(0));
    const after = await row(id);
    assert.equal(ran, false, "the handler did not run");
    assert.deepEqual(
      { runState: after.runState, status: after.status, errorMessage: after.errorMessage, completedAt: after.completedAt },
      { runState: "done", status: "failed", errorMessage: INTERRUPTED, completedAt: recorded.completedAt },
    );
  });
});
