import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import type { DataSource } from "typeorm";
import { openDatabase } from "../../server/data/data-source";
import { DatabaseOutage } from "../../server/data/database-outage";
import { BatchedIndexWriter } from "../../server/ingest/batched-index-writer";
import { JobProgress } from "../../server/ingest/job-progress";
import type { DocumentInput } from "../../server/search/search-index";
import { SqliteFtsIndex } from "../../server/search/sqlite-fts-index";

describe("BatchedIndexWriter on a real FTS5 index", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sluice-batched-writer-"));
  let db: DataSource;
  const index = new SqliteFtsIndex({ dir: path.join(dir, "indexes") });
  after(async () => {
    await index.close();
    if (db?.isInitialized) await db.destroy();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const doc = (i: number): DocumentInput => ({
    sourceId: "source-1",
    path: `share/file-${i}.txt`,
    title: `file-${i}`,
    size: 10,
    modifiedAt: new Date(1_700_000_000_000),
    version: null,
    chunks: [{ chunkIndex: 0, text: `document number ${i} about otters` }],
  });

  it("writes batches two at a time, holds callers back beyond that, and flush waits for all", async () => {
    db = await openDatabase(dir);
    const collectionId = randomUUID();
    // The real index, observed: each batch write is slowed so that writes overlap.
    let writing = 0;
    let mostAtOnce = 0;
    const observed = Object.create(index) as SqliteFtsIndex;
    observed.upsertDocuments = async (id: string, docs: DocumentInput[]) => {
      writing++;
      mostAtOnce = Math.max(mostAtOnce, writing);
      await new Promise((r) => setTimeout(r, 30));
      try {
        return await index.upsertDocuments(id, docs);
      } finally {
        writing--;
      }
    };
    const progress = new JobProgress(db, randomUUID(), new DatabaseOutage(0));
    const writer = new BatchedIndexWriter(observed, collectionId, progress);
    // Eight lanes adding 64 documents each, as the ingestion job's lanes do: eight batches.
    await Promise.all(
      Array.from({ length: 8 }, async (_, lane) => {
        for (let i = 0; i < 64; i++) await writer.add(doc(lane * 64 + i), 10);
      }),
    );
    await writer.flush();
    assert.equal(mostAtOnce, 2, "two batches written at once, never more");
    assert.equal(writing, 0, "flush returned after every write ended");
    assert.equal(progress.entitiesProcessed, 512);
    assert.equal((await index.listDocuments(collectionId, 0, 1)).total, 512);
    assert.ok((await index.search(collectionId, "number 511", 5)).some((hit) => hit.path === "share/file-511.txt"));
  });
});
