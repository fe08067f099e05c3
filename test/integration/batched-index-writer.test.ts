import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import type { DataSource } from "typeorm";
import { openDatabase } from "../../server/data/data-source";
import { DatabaseOutage } from "../../server/data/database-outage";
import { BatchedIndexWriter, GROUP_COMMIT } from "../../server/ingest/batched-index-writer";
import { JobProgress } from "../../server/ingest/job-progress";
import type { DocumentInput } from "../../server/search/search-index";
import { SqliteFtsIndex } from "../../server/search/sqlite";
import { waitFor } from "../fixtures/wait-for";

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
    // The real index, observed: a write lasts until a second one runs beside it (the writer let
    // the next batch go) or the lanes have nothing left to add, so writes overlap however slow the machine.
    let writing = 0;
    let mostAtOnce = 0;
    let added = 0;
    const observed = Object.create(index) as SqliteFtsIndex;
    observed.upsertDocuments = async (id: string, docs: DocumentInput[]) => {
      writing++;
      mostAtOnce = Math.max(mostAtOnce, writing);
      await waitFor(() => writing >= 2 || added === 512, "a second write beside the first", { intervalMs: 1 });
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
        for (let i = 0; i < 64; i++) {
          added++;
          await writer.add(doc(lane * 64 + i), 10);
        }
      }),
    );
    await writer.flush();
    assert.equal(mostAtOnce, 2, "two batches written at once, never more");
    assert.equal(writing, 0, "flush returned after every write ended");
    assert.equal(progress.entitiesProcessed, 512);
    assert.equal((await index.listDocuments(collectionId, 0, 1)).total, 512);
    assert.ok((await index.search(collectionId, "number 511", 5)).some((hit) => hit.path === "share/file-511.txt"));
  });

  it("with group commit puts what came in while the writes were busy in the next batch, up to its cap, and holds callers back beyond", async () => {
    db ??= await openDatabase(dir);
    const collectionId = randomUUID();
    let writing = 0;
    let mostAtOnce = 0;
    const sizes: number[] = [];
    let heldBack = 0;
    let heldNow = 0;
    const observed = Object.create(index) as SqliteFtsIndex;
    observed.upsertDocuments = async (id: string, docs: DocumentInput[]) => {
      writing++;
      mostAtOnce = Math.max(mostAtOnce, writing);
      sizes.push(docs.length);
      // A slow writer: a write lasts until the lanes filled the next batch (a caller is held
      // back) or have nothing left to add, so batches grow meanwhile however slow the machine.
      await waitFor(() => heldNow > 0 || next === total, "the next batch to fill up while the writes are busy", { intervalMs: 1 });
      try {
        return await index.upsertDocuments(id, docs);
      } finally {
        writing--;
      }
    };
    const progress = new JobProgress(db, randomUUID(), new DatabaseOutage(0));
    const writer = new BatchedIndexWriter(observed, collectionId, progress, GROUP_COMMIT);
    const total = 1000;
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < total) {
          const i = next++;
          const queued = writer.add(doc(i), 10);
          let settled = false;
          void queued.then(() => (settled = true));
          await Promise.resolve();
          const held = !settled;
          if (held) {
            heldBack++;
            heldNow++;
          }
          await queued;
          if (held) heldNow--;
        }
      }),
    );
    await writer.flush();
    assert.equal(mostAtOnce, GROUP_COMMIT.writesInFlight, "never more writes at once than the policy's");
    assert.equal(sizes[0], GROUP_COMMIT.documents, "the first batch goes as soon as it is due");
    assert.ok(sizes.some((n) => n > GROUP_COMMIT.documents), `batches grew while the writer was busy: ${sizes.join(", ")}`);
    assert.ok(Math.max(...sizes) <= GROUP_COMMIT.maxDocuments, `no batch over the cap: ${sizes.join(", ")}`);
    assert.ok(heldBack > 0, "callers were held back while the next batch was full");
    assert.equal(sizes.reduce((a, b) => a + b, 0), total);
    assert.equal(progress.entitiesProcessed, total);
    assert.equal((await index.listDocuments(collectionId, 0, 1)).total, total);
  });

  it("with group commit, a batch that fails is written document by document, so only the bad file fails", async () => {
    db ??= await openDatabase(dir);
    const collectionId = randomUUID();
    const observed = Object.create(index) as SqliteFtsIndex;
    const bad = (docs: DocumentInput[]) => docs.some((d) => d.path.endsWith("file-7.txt"));
    observed.upsertDocuments = async (id: string, docs: DocumentInput[]) => {
      if (bad(docs)) throw new Error("no room for file 7");
      return index.upsertDocuments(id, docs);
    };
    observed.upsertDocument = async (id: string, d: DocumentInput) => {
      if (bad([d])) throw new Error("no room for file 7");
      return index.upsertDocument(id, d);
    };
    const progress = new JobProgress(db, randomUUID(), new DatabaseOutage(0));
    const writer = new BatchedIndexWriter(observed, collectionId, progress, GROUP_COMMIT);
    for (let i = 0; i < 100; i++) await writer.add(doc(i), 10);
    await writer.flush();
    assert.equal(progress.entitiesProcessed, 100);
    assert.equal(progress.entitiesFailed, 1);
    assert.equal((await index.listDocuments(collectionId, 0, 1)).total, 99);
  });
});
